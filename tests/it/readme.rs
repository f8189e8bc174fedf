//! The README's walkthrough, run as written: the shell lines between
//! `<!-- walkthrough -->` and `<!-- /walkthrough -->` in README.md, in a
//! fresh directory, with `digestd` the binary under test (a shell
//! function, so the lines stay exactly as a reader pastes them). Each
//! command must exit 0, or 2 where its comment says "refused"; then the
//! digest must be in `./outbox/`. On SQLite, and on PostgreSQL when
//! `DIGESTD_TEST_DATABASE_URL` is set (a fresh database, named by
//! `DIGESTD_DATABASE_URL`).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::TestDb;

/// One command of the walkthrough: its text (a here-document's lines
/// included) and the exit code its comment promises.
#[derive(Debug)]
struct Step {
    text: String,
    expect: i32,
}

/// The walkthrough's commands, from README.md's text.
fn walkthrough(readme: &str) -> Vec<Step> {
    let start = readme
        .find("<!-- walkthrough -->")
        .expect("README.md has a <!-- walkthrough --> marker");
    let end = readme
        .find("<!-- /walkthrough -->")
        .expect("README.md has a <!-- /walkthrough --> marker");
    assert!(start < end, "the markers are in order");
    let mut lines = readme[start..end]
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("```"));
    let mut steps = Vec::new();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let mut text = line.to_string();
        while text.ends_with('\\') {
            text.push('\n');
            text.push_str(lines.next().expect("a continued line goes on"));
        }
        // A here-document: its lines, through the terminator, belong to it.
        if let Some(pos) = text.find("<<") {
            let word = text[pos + 2..]
                .split_whitespace()
                .next()
                .expect("a here-document has a terminator")
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string();
            loop {
                let l = lines.next().expect("the here-document ends");
                text.push('\n');
                text.push_str(l);
                if l == word {
                    break;
                }
            }
        }
        let first = text.lines().next().unwrap_or_default();
        let expect = match first.split_once(" # ") {
            Some((_, comment)) if comment.trim_start().starts_with("refused") => 2,
            _ => 0,
        };
        steps.push(Step { text, expect });
    }
    steps
}

/// The script the shell runs: every step followed by a check of its exit
/// code that names the step and stops the script.
fn script(steps: &[Step]) -> String {
    let mut s = String::from("digestd() { \"$DIGESTD_TEST_BIN\" \"$@\"; }\n");
    for (i, step) in steps.iter().enumerate() {
        let first = step.text.lines().next().unwrap_or_default();
        let shown = first.replace('\'', "'\\''");
        s.push_str(&format!("echo '>>> {shown}'\n{}\n", step.text));
        s.push_str(&format!(
            "rc=$?; if [ \"$rc\" -ne {} ]; then echo 'README walkthrough step {}: exit '\"$rc\"', expected {}: {shown}' >&2; exit 100; fi\n",
            step.expect,
            i + 1,
            step.expect
        ));
    }
    s
}

/// Runs the walkthrough in `dir`; `db_url` points it at PostgreSQL.
fn run(dir: &Path, db_url: Option<&str>) -> (String, String) {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("read README.md");
    let steps = walkthrough(&readme);
    assert!(steps.len() >= 20, "the walkthrough is there: {steps:?}");
    assert!(
        steps.iter().any(|s| s.expect == 2),
        "the walkthrough shows a refusal"
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script(&steps))
        .current_dir(dir)
        .env("DIGESTD_TEST_BIN", env!("CARGO_BIN_EXE_digestd"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DIGESTD_") {
            cmd.env_remove(key);
        }
    }
    cmd.env_remove("RUST_LOG");
    if let Some(url) = db_url {
        cmd.env("DIGESTD_DATABASE_URL", url);
    }
    let out = cmd.output().expect("run sh");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "the README walkthrough failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    (stdout, stderr)
}

/// What the walkthrough promises its reader, checked on its output.
fn check(dir: &Path, stdout: &str, stderr: &str) {
    // The second, identical subscription is refused, naming the first.
    assert!(
        stderr.contains("subscription 1"),
        "the refusal names subscription 1: {stderr}"
    );
    // preview shows the digest the tick then sends.
    let preview = stdout
        .split(">>> digestd preview")
        .nth(1)
        .expect("preview ran");
    assert!(preview.contains("Room 2"), "preview: {preview}");
    // The tick posted asha's digest and the queue delivered it.
    let mails: Vec<(String, String)> = std::fs::read_dir(dir.join("outbox"))
        .expect("outbox/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .map(|p| {
            let raw = std::fs::read(p).unwrap();
            let m = mail_parser::MessageParser::default().parse(&raw).unwrap();
            let to = m.to().and_then(|a| a.first()).and_then(|a| a.address());
            let to = to.unwrap_or_default().to_string();
            (to, m.body_text(0).unwrap_or_default().into_owned())
        })
        .collect();
    let digest = mails
        .iter()
        .find(|(to, body)| to == "asha@example.com" && body.contains("Retro"))
        .map(|(_, body)| body)
        .unwrap_or_else(|| panic!("asha's digest is in outbox/: {mails:#?}"));
    assert!(digest.contains("Standup"), "{digest}");
    assert!(digest.contains("Room 2"), "{digest}");
    // The test alerts went through the dir transport too.
    assert!(
        mails.iter().any(|(to, _)| to == "ops@example.com"),
        "{mails:#?}"
    );
    assert!(
        std::fs::read_dir(dir.join("outbox/xmpp"))
            .expect("outbox/xmpp/")
            .count()
            >= 1
    );
    // The notification was cancelled before any pass delivered it.
    assert!(stdout.contains("\"cancelled\"") || stdout.contains("cancelled"));
    assert!(dir.join("week.svg").exists(), "grid --svg wrote week.svg");
}

#[test]
fn the_readme_walkthrough_works_as_written_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = run(dir.path(), None);
    check(dir.path(), &out, &err);
    assert!(dir.path().join("data/digestd.db").exists());
}

#[test]
fn the_readme_walkthrough_works_as_written_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = run(dir.path(), Some(&db.url));
    check(dir.path(), &out, &err);
    assert!(!dir.path().join("data/digestd.db").exists());
}

#[test]
fn a_broken_step_fails_the_run() {
    let steps = walkthrough(
        "<!-- walkthrough -->\n```sh\ndigestd init\nfalse   # a command that stopped working\ndigestd user add x   # refused: no --tz\n```\n<!-- /walkthrough -->\n",
    );
    assert_eq!(steps.len(), 3);
    assert_eq!(
        steps.iter().map(|s| s.expect).collect::<Vec<_>>(),
        [0, 0, 2]
    );
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(script(&steps))
        .current_dir(dir.path())
        .env("DIGESTD_TEST_BIN", env!("CARGO_BIN_EXE_digestd"))
        .env("DIGESTD_DATABASE_URL", "sqlite://t.db")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(100));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step 2: exit 1, expected 0: false"), "{err}");
}
