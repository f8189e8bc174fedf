//! The operator's daily report in `[i18n] operator_locale`, through the
//! binary on each back end: `digestd report` prints it in German (from
//! `de-AT`) and Japanese with the same numbers as the seeded data of
//! `report.rs`; the tick posts it with a German subject, and the queue
//! sends the German text; a hostile locale stops every command with one
//! line (exit 2). Expected texts are written out by hand.

use crate::common;

use common::TestDb;
use diesel::prelude::*;
use digestd::db::schema::{nt_requests, ops_reports};

use super::report::{digestd, seed};

const NOW: &str = "2026-11-23T09:30:00Z";

fn config(db: &TestDb, dir: &std::path::Path, locale: &str) -> std::path::PathBuf {
    let path = dir.join(format!("digestd-{locale}.toml"));
    std::fs::write(
        &path,
        format!(
            "[database]\nurl = \"{}\"\n[email]\ndir = \"{}\"\n\
             [ops]\nreport_to = \"ops@example.com\"\nreport_hour = 9\n\
             [i18n]\noperator_locale = \"{locale}\"\n",
            db.url,
            dir.join("outbox").display()
        ),
    )
    .unwrap();
    path
}

fn report_text(dir: &std::path::Path, config: &std::path::Path) -> String {
    let out = digestd(dir, config, &["--now", NOW, "report"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn in_the_operators_language(db: &TestDb) {
    seed(&mut db.conn());
    let dir = tempfile::tempdir().unwrap();
    let de = config(db, dir.path(), "de-AT");
    let text = report_text(dir.path(), &de);
    // The seeded numbers (report.rs): 4 due, 3 posted, 1 empty, 1 sent,
    // 1 failed; one hard and one soft bounce; one retry waiting.
    for want in [
        "Übersichten seit 2026-11-22 09:30:00 UTC:",
        "  Kanal    Frequenz   fällig erstellt    leer gesendet gescheitert",
        "  email    daily           4        3       1        1           1",
        "Unzustellbar: 1 dauerhaft, 1 vorübergehend; deaktivierte Adressen: 1",
        "Ausstehende Wiederholungen: 1",
        "(300 s verspätet)",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    assert!(
        !text.contains("Retries") && !text.contains("report-"),
        "{text}"
    );
    let text = report_text(dir.path(), &config(db, dir.path(), "ja"));
    assert!(text.contains("再試行待ち: 1 件"), "{text}");
    assert!(
        text.contains("バウンス: 恒久的 1 件、一時的 1 件"),
        "{text}"
    );

    // The tick at 09:00 posts it in German; the queue sends that text.
    let out = digestd(dir.path(), &de, &["--now", "2026-11-23T09:00:00Z", "tick"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = db.conn();
    let id: i64 = ops_reports::table
        .select(ops_reports::request_id)
        .first(&mut c)
        .unwrap();
    let subject: String = nt_requests::table
        .find(id)
        .select(nt_requests::subject)
        .first(&mut c)
        .unwrap();
    assert_eq!(subject, "digestd-Bericht 2026-11-23");
    let out = digestd(
        dir.path(),
        &de,
        &["--now", "2026-11-23T09:05:00Z", "queue", "run"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Among what the queue sent (the seeded data's digests too), the
    // report.
    let raws: Vec<Vec<u8>> = std::fs::read_dir(dir.path().join("outbox"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let m = raws
        .iter()
        .map(|raw| mail_parser::MessageParser::default().parse(raw).unwrap())
        .find(|m| m.subject() == Some("digestd-Bericht 2026-11-23"))
        .expect("the report's message, in German");
    let body = m.body_text(0).unwrap();
    assert!(body.contains("Ausstehende Wiederholungen: 1"), "{body}");
    assert!(
        body.contains("Letzter Tick: 2026-11-23 09:00:00 UTC"),
        "{body}"
    );
}

/// A locale that is not a BCP 47 tag stops `check` and `report` with one
/// line naming the setting, exit 2.
fn a_hostile_operator_locale_is_refused(db: &TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("de-{}", "x".repeat(40));
    for bad in [
        "",
        "../../etc/passwd",
        "de DE",
        "d",
        "de-\\u0007",
        "日本語",
        long.as_str(),
    ] {
        let path = dir.path().join("bad.toml");
        std::fs::write(
            &path,
            format!(
                "[database]\nurl = \"{}\"\n[i18n]\noperator_locale = \"{bad}\"\n",
                db.url
            ),
        )
        .unwrap();
        for cmd in [&["check"][..], &["report"][..]] {
            let out = digestd(dir.path(), &path, cmd);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{bad:?} {cmd:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(err.contains("operator_locale"), "{err}");
        }
    }
}

backend_tests!(
    in_the_operators_language,
    a_hostile_operator_locale_is_refused
);
