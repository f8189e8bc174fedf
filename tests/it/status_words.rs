//! The queue's SQL names request statuses as literals (`status =
//! 'pending'`), where a bound parameter would cost PostgreSQL the partial
//! indexes on `status` (`deliver/queue/expand.rs` says why). Each such word
//! must be one [`RequestStatus`] has: a misspelt one would match no row and
//! no compiler would say so.

use std::collections::BTreeSet;
use std::path::Path;

use digestd::db::states::RequestStatus;

use crate::common::source::rust_files;

/// The quoted words `code` compares a status with or sets it to
/// (`status = 'x'`, `status <> 'x'`, `status IN ('x', 'y')`, and the
/// words of `status = CASE … THEN 'x' … ELSE 'y' END`). A word written
/// in from a value (`'{status}'`, typed where it is made) is not one.
fn status_words(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let quoted = |rest: &str| -> Vec<String> {
        // The quoted words at the start of `rest`: one, or a list in
        // parentheses.
        let rest = rest.trim_start();
        let list = match rest.strip_prefix('(') {
            Some(r) => &r[..r.find(')').unwrap_or(r.len())],
            None => rest.split([' ', ',', '"', '\\']).next().unwrap_or(""),
        };
        list.split(',')
            .map(str::trim)
            .filter_map(|w| w.strip_prefix('\'')?.strip_suffix('\''))
            .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .map(str::to_string)
            .collect()
    };
    for (i, _) in code.match_indices("status") {
        let rest = code[i + "status".len()..].trim_start();
        let Some(r) = ["=", "<>", "!=", "IN"]
            .iter()
            .find_map(|op| rest.strip_prefix(op))
        else {
            continue;
        };
        match r.trim_start().strip_prefix("CASE") {
            Some(case) => {
                let case = &case[..case.find("END").unwrap_or(case.len())];
                for key in ["THEN ", "ELSE "] {
                    for (j, _) in case.match_indices(key) {
                        out.extend(quoted(&case[j + key.len()..]));
                    }
                }
            }
            None => out.extend(quoted(r)),
        }
    }
    out
}

#[test]
fn the_status_reader_sees_every_form() {
    let got = status_words(
        "SET status = 'sent' WHERE q.status IN ('pending', 'sending') AND status <> 'failed', \
         status = CASE WHEN a THEN 'partial_failure' ELSE 'cancelled' END, \
         name = CASE WHEN b THEN '' ELSE 'x' END; status = '{status}'; status = $1; status_code = 2",
    );
    assert_eq!(
        got,
        [
            "sent",
            "pending",
            "sending",
            "failed",
            "partial_failure",
            "cancelled"
        ]
    );
}

#[test]
fn every_status_the_queues_sql_names_is_a_request_status() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/deliver/src");
    let files = rust_files(&dir);
    let known: BTreeSet<&str> = RequestStatus::ALL.iter().map(|s| s.as_str()).collect();
    let (mut seen, mut unknown) = (0, Vec::new());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for w in status_words(&text) {
            seen += 1;
            if !known.contains(w.as_str()) {
                unknown.push(format!("{}: '{w}'", f.display()));
            }
        }
    }
    // The queue's statements name statuses in well over ten places; fewer
    // would mean this reader no longer finds them.
    assert!(seen >= 10, "only {seen} status words found");
    assert!(
        unknown.is_empty(),
        "not a request status:\n{}",
        unknown.join("\n")
    );
}
