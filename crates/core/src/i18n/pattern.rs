//! A message compiled for speed: a pattern of text and variables only
//! (no selector, no reference), written straight into a string without
//! Fluent's resolver. Most of a digest's words are such patterns, written
//! once per line; messages with a selector (plurals) go through the bundle.

use fluent_syntax::ast::{Expression, InlineExpression, Pattern, PatternElement};

/// One piece of a compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    Text(String),
    Var(String),
}

/// A pattern of text and variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Simple(pub(super) Vec<Piece>);

/// A value given to a message.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Str(&'a str),
    /// A count: plural rules select on it.
    Num(usize),
    /// Text written by a function straight into the message's string (a
    /// value built in place, with no string of its own).
    Write(&'a dyn Fn(&mut String)),
}

impl Arg<'_> {
    /// The value written into `out`.
    pub(super) fn push(&self, out: &mut String) {
        match self {
            Arg::Str(s) => out.push_str(s),
            Arg::Num(n) => {
                use std::fmt::Write;
                // Writing to a String cannot fail.
                let _ = write!(out, "{n}");
            }
            Arg::Write(f) => f(out),
        }
    }
}

impl Simple {
    /// The compiled form of `p`, when it has only text and variables (and
    /// string literals, which are text).
    pub(super) fn compile(p: &Pattern<&str>) -> Option<Simple> {
        let mut out: Vec<Piece> = Vec::with_capacity(p.elements.len());
        for e in &p.elements {
            let piece = match e {
                PatternElement::TextElement { value } => Piece::Text(value.to_string()),
                PatternElement::Placeable {
                    expression: Expression::Inline(i),
                } => match i {
                    InlineExpression::VariableReference { id } => Piece::Var(id.name.to_string()),
                    InlineExpression::StringLiteral { value } if !value.contains('\\') => {
                        Piece::Text(value.to_string())
                    }
                    _ => return None,
                },
                _ => return None,
            };
            match (out.last_mut(), piece) {
                (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
                (_, piece) => out.push(piece),
            }
        }
        Some(Simple(out))
    }

    /// The text of a pattern without variables.
    pub(super) fn constant(&self) -> Option<&str> {
        match self.0.as_slice() {
            [] => Some(""),
            [Piece::Text(t)] => Some(t),
            _ => None,
        }
    }

    /// Writes the pattern with `args` into `out`; returns where the
    /// variable `mark` was written (start and end), if it was. A variable
    /// without a value is written as its name in braces, as Fluent does.
    pub(super) fn write(
        &self,
        out: &mut String,
        args: &[(&str, Arg)],
        mark: Option<&str>,
    ) -> Option<(usize, usize)> {
        let mut at = None;
        for p in &self.0 {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(v) => {
                    let start = out.len();
                    match args.iter().find(|(k, _)| k == v) {
                        Some((_, a)) => a.push(out),
                        None => {
                            out.push_str("{$");
                            out.push_str(v);
                            out.push('}');
                        }
                    }
                    if mark == Some(v.as_str()) && at.is_none() {
                        at = Some((start, out.len()));
                    }
                }
            }
        }
        at
    }
}
