//! A test that needs the process to itself: every test of this binary
//! shares one process, so a test that installs the global tracing
//! subscriber (or changes anything else process-wide) would see, and be
//! seen by, every test running beside it. Such a test runs again in a
//! child process of this same binary, filtered to itself alone, and passes
//! when the child does.

use std::process::{Command, Output};

/// Set in the child to the name of the one test it runs.
const ALONE: &str = "DIGESTD_TEST_ALONE";

/// The test `name` of module `module` (its `module_path!()`), as the test
/// harness names it: the path without the crate's name.
fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, rest)) => format!("{rest}::{name}"),
        None => name.to_string(),
    }
}

/// Runs test `name` of `module` alone in a child process of this test
/// binary, with `env` set (a `None` value removes the variable), and
/// returns what it printed and how it ended.
pub fn run(module: &str, name: &str, env: &[(&str, Option<&str>)]) -> Output {
    let full = test_name(module, name);
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([full.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(ALONE, &full);
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.output().expect("the test binary runs")
}

/// Whether this is the child that runs test `name` alone. When it is not,
/// the test is run in such a child, which must pass (it must also have
/// found the test, so that a misspelt name cannot pass); the caller then
/// returns. So a test that needs the process to itself opens with
/// `if common::alone::elsewhere(module_path!(), "its_name") { return; }`.
pub fn elsewhere(module: &str, name: &str) -> bool {
    let full = test_name(module, name);
    if std::env::var(ALONE).as_deref() == Ok(full.as_str()) {
        return false;
    }
    let out = run(module, name, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{full}, run alone in its own process:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}
