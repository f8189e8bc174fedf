//! The house rule, checked: the workspace's crates are layers, and the
//! compiler keeps them one-way (a crate names only the crates below it in
//! its `Cargo.toml`). Inside each crate a top-level module imports only
//! modules below it in [`CRATES`] (its own crate's earlier modules, or a
//! lower crate's, which every crate re-exports under their own names), so
//! the data path reads one way (ingest → schedule → digest → deliver) and
//! no import circle can form. Test modules (`#[cfg(test)] mod tests` at the
//! end of a file) may import anything.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::source::rust_files;

/// Every crate of the workspace, lowest first, with every top-level module
/// of its `src/`, lowest first.
const CRATES: &[(&str, &[&str])] = &[
    (
        "crates/core",
        &[
            "error", "clock", "ids", "validate", "text", "recur", "ics", "i18n",
        ],
    ),
    (
        "crates/store",
        &[
            "error",
            "schema",
            "states",
            "stamp",
            "bulk",
            "rows",
            "log",
            "reads",
            "batches",
            "outbox",
            "open",
            "checkpoint",
            "watch",
            "pool",
            "rehearse",
        ],
    ),
    (
        "crates/engine",
        &[
            "config",
            "events",
            "parties",
            "modlog",
            "items",
            "seen",
            "access",
            "subscriptions",
            "ingest",
            "schedule",
            "digest",
            "feeds",
        ],
    ),
    // One layer: the queue and its listeners name each other (the queue
    // hands rounds to the listeners, which report through the queue's
    // types); the crate as a whole sits on the engine.
    (
        "crates/deliver",
        &[
            "bounce",
            "dbout",
            "dkim",
            "encode",
            "events",
            "http",
            "listener",
            "matrix",
            "message",
            "msgid",
            "outbox",
            "queue",
            "tests",
            "sink",
            "sms",
            "smtp",
            "threading",
            "webhook",
            "xmpp",
        ],
    ),
    (
        "crates/app",
        &[
            "manage", "import", "metrics", "report", "remove", "signup", "cycle",
        ],
    ),
    ("crates/http", &["http", "serve"]),
    ("crates/bench", &["demo", "bench"]),
    (".", &["cli"]),
];

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate)
        .join("src")
}

/// The crates whose top-level modules form one layer: they may name each
/// other, and only lower crates' modules besides.
const ONE_LAYER: &[&str] = &["crates/deliver"];

/// Where module `i` of crate `c` sits within its crate.
fn place(c: usize, i: usize) -> usize {
    if ONE_LAYER.contains(&CRATES[c].0) {
        0
    } else {
        i
    }
}

/// Where `name`, seen through `crate::` in crate number `k`, lives: its
/// own crate's module first, then the nearest lower crate's.
fn rank(k: usize, name: &str) -> Option<(usize, usize)> {
    (0..=k).rev().find_map(|c| {
        CRATES[c]
            .1
            .iter()
            .position(|m| *m == name)
            .map(|i| (c, place(c, i)))
    })
}

/// The top-level modules a piece of source names through `crate::`, as
/// `crate::a::…` or inside `crate::{a, b::{…}}`.
fn crate_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of the group: those at brace depth 0.
            let (mut depth, mut at_start) = (0, true);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => at_start = true,
                    c if at_start && !c.is_whitespace() => {
                        names.insert(ident(&group[j..]));
                        at_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names
}

#[test]
fn every_module_imports_only_modules_below_it() {
    let mut upward = Vec::new();
    for (k, (krate, layers)) in CRATES.iter().enumerate() {
        let mut tops: Vec<String> = std::fs::read_dir(src(krate))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .filter(|n| n != "lib" && n != "main")
            .collect();
        tops.sort();
        // `x.rs` beside its own `x/` of submodules is one module.
        tops.dedup();
        let mut listed: Vec<String> = layers.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(
            tops, listed,
            "{krate}: CRATES must name every top-level module once"
        );

        for (i, top) in layers.iter().enumerate() {
            let dir = src(krate).join(top);
            let mut files = if dir.is_dir() {
                rust_files(&dir)
            } else {
                Vec::new()
            };
            // `top.rs`, alone or beside its directory of submodules.
            let file = src(krate).join(format!("{top}.rs"));
            if file.is_file() {
                files.push(file);
            }
            // A module's unit tests in a file of their own (`mod tests;`
            // under `#[cfg(test)]`) are test code too.
            files.retain(|f| f.file_name().is_none_or(|n| n != "tests.rs"));
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                for name in crate_names(without_tests(&text)) {
                    let Some(to) = rank(k, &name) else {
                        continue; // a crate-root item (`crate::Result`)
                    };
                    if to > (k, place(k, i)) {
                        upward.push(format!("{} -> {name}", f.display()));
                    }
                }
            }
        }
    }
    assert!(upward.is_empty(), "imports upward:\n{}", upward.join("\n"));
}

#[test]
fn the_import_reader_sees_every_form() {
    let got = crate_names(
        "use crate::a::b;\nuse crate::{c, d::{e, f}, g as h};\nlet x = crate::i::j(); crate::Result",
    );
    // `crate::Result` is a crate-root item: its name reads as "".
    let want: BTreeSet<String> = ["", "a", "c", "d", "g", "i"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(got, want);
}

/// `text` (a source file) without its test module: a `#[cfg(test)] mod
/// tests { … }` at its end. A `mod tests;` declaration (the tests in a
/// file of their own) is code like any other line.
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests {")
        .map_or(text, |i| &text[..i])
}

/// The store answers every question whose answer depends on the back end
/// (`crates/store`'s documentation and `docs/architecture.md` list its
/// interfaces), so no crate above it names a back end: not a variant of
/// `DbConn` or `Backend` (a `match`, an `if let`, a `matches!`), nor a
/// back end's own connection or types (`PgConnection`, `diesel::sqlite::…`),
/// which is how a path for one back end alone is written. Test modules
/// aside (a test may pick a back end to check it).
///
/// One file is let off, for what it opens, not for the store's back end:
/// the `db` transport's outbox (`crates/deliver/src/dbout.rs`) is an SQLite file of
/// its own that a relay reads, whatever the store runs on.
const OWN_SQLITE_FILE: &str = "crates/deliver/src/dbout.rs";

/// The benchmarks' crate still builds its worlds and measures its floors
/// (a back end's raw `COPY` or prepared `INSERT`) with SQL of each back end,
/// and is held to this list instead, with how many times a file names a
/// back end's variant: a file may leave it or go down in it (then the list
/// is brought down with it), never come in or go up.
const BENCH_BACK_END_CHOICES: &[(&str, usize)] = &[
    ("crates/bench/src/bench/burst/world.rs", 2),
    ("crates/bench/src/bench/compose/stored.rs", 2),
    ("crates/bench/src/bench/compose/world.rs", 3),
    ("crates/bench/src/bench/import.rs", 6),
    ("crates/bench/src/bench/ingest.rs", 8),
    ("crates/bench/src/bench/mod.rs", 2),
    ("crates/bench/src/bench/smtp.rs", 1),
    ("crates/bench/src/bench/sql.rs", 10),
    ("crates/bench/src/bench/tick/mod.rs", 6),
    ("crates/bench/src/bench/tick/world.rs", 3),
];

/// How many times `code` names a back end's variant.
fn back_end_choices(code: &str) -> usize {
    ["DbConn::", "Backend::"]
        .iter()
        .flat_map(|ty| {
            code.match_indices(ty)
                .map(move |(i, _)| &code[i + ty.len()..])
        })
        .filter(|rest| {
            ["Sqlite", "Postgres"].iter().any(|v| {
                rest.strip_prefix(v)
                    .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
            })
        })
        .count()
}

/// The back ends' own connections and types `code` names.
fn back_end_types(code: &str) -> Vec<&'static str> {
    [
        "PgConnection",
        "SqliteConnection",
        "diesel::pg::",
        "diesel::sqlite::",
    ]
    .into_iter()
    .filter(|t| code.contains(t))
    .collect()
}

#[test]
fn no_crate_above_the_store_names_a_back_end() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut named = Vec::new();
    for krate in [
        "crates/engine",
        "crates/deliver",
        "crates/app",
        "crates/http",
        ".",
    ] {
        for f in rust_files(&src(krate)) {
            let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&f).unwrap();
            let code = without_tests(&text);
            let n = back_end_choices(code);
            if n > 0 {
                named.push(format!("{rel}: {n} back-end variant(s)"));
            }
            let types = back_end_types(code);
            if !types.is_empty() && rel != OWN_SQLITE_FILE {
                named.push(format!("{rel}: {}", types.join(", ")));
            }
        }
    }
    assert!(
        named.is_empty(),
        "a path for one back end outside the store (give the store an interface for it):\n{}",
        named.join("\n")
    );
}

#[test]
fn back_end_choices_in_the_benchmarks_only_shrink() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for f in rust_files(&src("crates/bench")) {
        let text = std::fs::read_to_string(&f).unwrap();
        let n = back_end_choices(without_tests(&text));
        if n > 0 {
            let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            found.push((rel, n));
        }
    }
    found.sort();
    let listed: Vec<(String, usize)> = BENCH_BACK_END_CHOICES
        .iter()
        .map(|(f, n)| (f.to_string(), *n))
        .collect();
    let grew: Vec<String> = found
        .iter()
        .filter(|(f, n)| !listed.iter().any(|(g, m)| g == f && n <= m))
        .map(|(f, n)| format!("{f}: {n}"))
        .collect();
    assert!(
        grew.is_empty(),
        "a back-end choice in the benchmarks (move it into crates/store):\n{}",
        grew.join("\n")
    );
    assert_eq!(
        found, listed,
        "fewer back-end choices than BENCH_BACK_END_CHOICES says: bring the list down"
    );
}

#[test]
fn the_back_end_counter_sees_variants_not_prefixes() {
    assert_eq!(
        back_end_choices(
            "DbConn::Sqlite(c) => 1, Backend::Postgres => 2, Backend::SqliteLike, x::Sqlite"
        ),
        2
    );
    let code = "use diesel::pg::PgRowByRowLoadingMode;\nfn f(c: &mut SqliteConnection) {}";
    assert_eq!(
        back_end_types(code),
        vec!["SqliteConnection", "diesel::pg::"]
    );
    let tests = "fn f() {}\n#[cfg(test)]\nmod tests {\n    DbConn::Sqlite\n}\n";
    assert_eq!(without_tests(tests), "fn f() {}\n");
    let declared = "#[cfg(test)]\nmod tests;\nfn g() { DbConn::Postgres }\n";
    assert_eq!(back_end_choices(without_tests(declared)), 1);
}
