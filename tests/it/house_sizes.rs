//! The house rule on size, checked on the product's source (every
//! crate's `src/` and the binary's) and on the tests' (every file under
//! `tests/`, the shared `tests/it/common` included): no function over 100
//! lines, and no file over 500 lines unless a `//!` line near its top says
//! why ("About 700 lines: …", "Longer than 500 lines …"). A function runs
//! from its `fn` line to the closing brace at its own indentation.

use std::path::{Path, PathBuf};

use crate::common::source::rust_files;

const MAX_FN_LINES: usize = 100;
const MAX_FILE_LINES: usize = 500;

/// The crates' source directories, the binary's last.
const SOURCES: &[&str] = &[
    "crates/alloc/src",
    "crates/core/src",
    "crates/store/src",
    "crates/engine/src",
    "crates/deliver/src",
    "crates/app/src",
    "crates/http/src",
    "crates/bench/src",
    "src",
];

/// The name of the function a line opens, if it opens one with a body.
fn opens_fn(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if rest.ends_with(';') {
        return None;
    }
    for word in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(word).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// Each function of `text` longer than [`MAX_FN_LINES`], with its length.
fn long_functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = opens_fn(l) else { continue };
        let indent = &l[..l.len() - l.trim_start().len()];
        let close = format!("{indent}}}");
        if let Some(j) = lines[i + 1..].iter().position(|m| *m == close) {
            let n = j + 2;
            if n > MAX_FN_LINES {
                out.push((name.to_string(), n));
            }
        }
    }
    out
}

/// Whether a file's top says why it is long.
fn says_why(text: &str) -> bool {
    text.lines().take(30).any(|l| {
        let Some(doc) = l.strip_prefix("//!") else {
            return false;
        };
        ["About ", "Over ", "Longer than ", "Just over "]
            .iter()
            .any(|w| doc.contains(w))
            && doc.contains(" lines")
    })
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The tests' source: the test binary's modules and their support.
const TESTS: &str = "tests";

/// Every `.rs` file under `dirs` (relative to the root), sorted, with its
/// path from the root and its text.
fn files_under<'a>(dirs: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = dirs
        .into_iter()
        .flat_map(|s| rust_files(&root().join(s)))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

/// The files the rule holds for: the product's, then the tests'.
fn measured_files() -> Vec<(String, String)> {
    let mut files = files_under(SOURCES.iter().copied());
    files.extend(files_under([TESTS]));
    files
}

#[test]
fn no_function_over_100_lines() {
    let long: Vec<String> = measured_files()
        .iter()
        .flat_map(|(rel, text)| {
            long_functions(text)
                .into_iter()
                .map(move |(name, n)| format!("{rel}: {name}, {n} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_file_over_500_lines_without_a_reason() {
    let found: Vec<String> = measured_files()
        .into_iter()
        .filter(|(_, text)| text.lines().count() > MAX_FILE_LINES && !says_why(text))
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        found.is_empty(),
        "files over {MAX_FILE_LINES} lines with no reason at the top: {found:?}"
    );
}

#[test]
fn the_measures_see_what_they_should() {
    let body = |n: usize| "    x();\n".repeat(n);
    let text = format!(
        "pub(crate) fn long() {{\n{}}}\n    async fn short() {{\n    }}\nfn decl();\nfn edge() {{\n{}}}\n",
        body(100),
        body(98)
    );
    assert_eq!(long_functions(&text), vec![("long".to_string(), 102)]);
    assert!(says_why(
        "//! A module.\n//!\n//! About 700 lines: kept together.\n"
    ));
    assert!(!says_why("//! A module of 700 lines.\n"));
}

/// The rule sees the tests: the binary's root, its shared support, a flow
/// in a subdirectory and this file.
#[test]
fn the_tests_are_measured_too() {
    let names: Vec<String> = measured_files().into_iter().map(|(rel, _)| rel).collect();
    for want in [
        "tests/it/main.rs",
        "tests/it/common/mod.rs",
        "tests/it/browser/admin.rs",
        "tests/it/house_sizes.rs",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} is not measured");
    }
}

/// The rules read every crate: each listed directory exists, and each
/// crate of the workspace is listed, so a crate moved or added cannot
/// leave the measures reading nothing.
#[test]
fn every_crate_is_measured() {
    let mut crates: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| format!("crates/{}/src", e.unwrap().file_name().to_string_lossy()))
        .collect();
    crates.push("src".into());
    crates.sort();
    let mut listed: Vec<String> = SOURCES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(crates, listed);
    assert!(SOURCES.iter().all(|s| root().join(s).is_dir()));
}
