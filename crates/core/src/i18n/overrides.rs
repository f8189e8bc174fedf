//! The operator's overrides: `[i18n] dir` holds `<tag>/*.ftl` (a shipped
//! language's tag: `de/`, `ja/`), whose messages replace the shipped ones
//! of the same key. Checked whole before anything is used: a file that
//! does not parse, a directory that is not a shipped language, a key the
//! shipped catalogues lack, a message using a variable the shipped one
//! does not give, or one naming a message the language lacks (or itself),
//! is refused with one line naming the file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fluent_bundle::{FluentArgs, FluentError, FluentValue};
use fluent_syntax::ast::{Entry, Expression, InlineExpression, Pattern, PatternElement, Resource};

use super::{shipped_source, Catalogs, Locale};

/// Largest override file read, in bytes.
pub const MAX_FILE: u64 = 1 << 20;

/// The variables a pattern uses, selectors and nested patterns included.
pub fn variables(p: &Pattern<&str>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_pattern(p, &mut out);
    out
}

fn walk_pattern(p: &Pattern<&str>, out: &mut BTreeSet<String>) {
    for e in &p.elements {
        if let PatternElement::Placeable { expression } = e {
            walk_expression(expression, out);
        }
    }
}

fn walk_expression(e: &Expression<&str>, out: &mut BTreeSet<String>) {
    match e {
        Expression::Select { selector, variants } => {
            walk_inline(selector, out);
            for v in variants {
                walk_pattern(&v.value, out);
            }
        }
        Expression::Inline(i) => walk_inline(i, out),
    }
}

fn walk_inline(i: &InlineExpression<&str>, out: &mut BTreeSet<String>) {
    match i {
        InlineExpression::VariableReference { id } => {
            out.insert(id.name.to_string());
        }
        InlineExpression::FunctionReference { arguments, .. } => {
            for a in &arguments.positional {
                walk_inline(a, out);
            }
            for a in &arguments.named {
                walk_inline(&a.value, out);
            }
        }
        InlineExpression::Placeable { expression } => walk_expression(expression, out),
        _ => {}
    }
}

/// Each message of `source` (a whole resource) and the variables it uses,
/// with the line it starts on; `Err((line, what))` when it does not parse.
#[allow(clippy::type_complexity)]
pub fn messages(
    source: &str,
) -> Result<BTreeMap<String, (usize, BTreeSet<String>)>, (usize, String)> {
    let line_of = |at: usize| source[..at.min(source.len())].matches('\n').count() + 1;
    let res: Resource<&str> = match fluent_syntax::parser::parse(source) {
        Ok(r) => r,
        Err((_, errors)) => {
            let e = &errors[0];
            let at = e.slice.as_ref().map_or(e.pos.start, |s| s.start);
            return Err((line_of(at), format!("syntax error: {}", e.kind)));
        }
    };
    let mut out = BTreeMap::new();
    for e in &res.body {
        match e {
            Entry::Message(m) => {
                // The parser's names are slices of `source`: where this
                // one stands.
                let at = line_of(m.id.name.as_ptr() as usize - source.as_ptr() as usize);
                let vars = m.value.as_ref().map(variables).unwrap_or_default();
                // Fluent keeps the last of two; which one a person reads
                // should not depend on where an edit landed.
                if let Some((first, _)) = out.insert(m.id.name.to_string(), (at, vars)) {
                    return Err((
                        at,
                        format!("{} is defined twice (first on line {first})", m.id.name),
                    ));
                }
            }
            Entry::Term(t) => {
                let at = source.find(&format!("-{}", t.id.name)).map_or(1, line_of);
                return Err((at, "terms are not supported in overrides".into()));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The override `source` read from `file` (shown in errors) for `l`,
/// checked against the shipped catalogues.
pub fn check(l: Locale, file: &str, source: &str) -> Result<(), String> {
    let shipped =
        messages(shipped_source(l)).map_err(|(n, e)| format!("shipped {}: {n}: {e}", l.tag()))?;
    let english =
        messages(shipped_source(Locale::En)).map_err(|(n, e)| format!("shipped en: {n}: {e}"))?;
    let mine = messages(source).map_err(|(n, e)| format!("{file}:{n}: {e}"))?;
    for (key, (line, vars)) in &mine {
        let Some((_, given)) = shipped.get(key).or_else(|| english.get(key)) else {
            return Err(format!("{file}:{line}: no shipped message is called {key}"));
        };
        if let Some(v) = vars.difference(given).next() {
            return Err(format!(
                "{file}:{line}: {key} uses ${v}, which digestd does not give it (it gives: {})",
                given
                    .iter()
                    .map(|g| format!("${g}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(())
}

/// The catalogues with the overrides in `dir` (see the module).
pub fn load(dir: &Path) -> Result<Catalogs, String> {
    let shown = dir.display();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("[i18n] dir {shown}: {e}"))?;
    let mut found: Vec<(Locale, String, String)> = Vec::new();
    let mut subdirs: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    subdirs.sort();
    for sub in subdirs {
        let name = sub
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if !sub.is_dir() {
            return Err(format!(
                "{}: not a language directory (expected <tag>/*.ftl)",
                sub.display()
            ));
        }
        let Some(l) = Locale::exact(&name) else {
            let tags: Vec<&str> = Locale::ALL.iter().map(|l| l.tag()).collect();
            return Err(format!(
                "{}: unknown locale directory {name:?} (shipped: {})",
                sub.display(),
                tags.join(", ")
            ));
        };
        let mut files: Vec<_> = std::fs::read_dir(&sub)
            .map_err(|e| format!("{}: {e}", sub.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ftl"))
            .collect();
        files.sort();
        for f in files {
            let file = f.display().to_string();
            let len = std::fs::metadata(&f)
                .map_err(|e| format!("{file}: {e}"))?
                .len();
            if len > MAX_FILE {
                return Err(format!("{file}: larger than {MAX_FILE} bytes"));
            }
            let src = std::fs::read_to_string(&f).map_err(|e| format!("{file}: {e}"))?;
            check(l, &file, &src)?;
            found.push((l, file, src));
        }
    }
    let overrides: Vec<(Locale, &str)> = found.iter().map(|(l, _, s)| (*l, s.as_str())).collect();
    let cats = Catalogs::with(&overrides)?;
    for (l, file, src) in &found {
        resolves(&cats, *l, file, src)?;
    }
    Ok(cats)
}

/// Formats each message of the override `source` (from `file`) as `cats`
/// holds it for `l`, with every variable the shipped message is given:
/// one that names a message the language lacks (`{ manage-subscriptionz }`)
/// or refers back to itself would reach people as `{manage-subscriptionz}`
/// or `{???}`, so it is refused like a syntax error.
fn resolves(cats: &Catalogs, l: Locale, file: &str, source: &str) -> Result<(), String> {
    let bundle = &cats.langs[l as usize].bundle;
    let shipped = messages(shipped_source(l)).unwrap_or_default();
    let mine = messages(source).map_err(|(n, e)| format!("{file}:{n}: {e}"))?;
    for (key, (line, vars)) in mine {
        let Some(pattern) = bundle.get_message(&key).and_then(|m| m.value()) else {
            continue;
        };
        let mut args = FluentArgs::new();
        for v in vars
            .iter()
            .chain(shipped.get(&key).into_iter().flat_map(|(_, g)| g))
        {
            args.set(v.clone(), FluentValue::from(2));
        }
        let mut errors = Vec::new();
        bundle.format_pattern(pattern, Some(&args), &mut errors);
        match errors.first() {
            Some(FluentError::ResolverError(e)) => {
                return Err(format!("{file}:{line}: {key}: {e}"))
            }
            Some(e) => return Err(format!("{file}:{line}: {key}: {e}")),
            None => {}
        }
    }
    Ok(())
}
