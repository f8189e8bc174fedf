//! Unit tests of loading and checking the settings.

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn string_settings_from_the_environment_take_any_string() {
    let cfg = Config::load(
        None,
        env(&[
            ("DIGESTD_SMS__FROM", "+15005550006"),
            ("DIGESTD_XMPP__PASSWORD", "12345678"),
            ("DIGESTD_EMAIL__DIR", "2026"),
            ("DIGESTD_XMPP__TLS", "false"),
            ("DIGESTD_EMAIL__POOL_SIZE", "8"),
        ]),
    )
    .unwrap();
    assert_eq!(cfg.sms.from, "+15005550006");
    assert_eq!(cfg.xmpp.password, "12345678");
    assert_eq!(cfg.email.dir, "2026");
    assert!(!cfg.xmpp.tls);
    assert_eq!(cfg.email.pool_size, 8);
}

#[test]
fn shipped_file_is_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/digestd.toml");
    assert_eq!(
        Config::load(Some(&path), env(&[])).unwrap(),
        Config::default()
    );
}

#[test]
fn environment_overrides_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    std::fs::write(&p, "[database]\npool_size = 2\n[record]\nbatch_size = 5\n").unwrap();
    let cfg = Config::load(
        Some(&p),
        env(&[
            ("DIGESTD_DATABASE__POOL_SIZE", "9"),
            ("DIGESTD_DATABASE_URL", "postgres://root@127.0.0.1/test"),
            ("DIGESTD_TEST_DATABASE_URL", "ignored"),
            ("OTHER", "x"),
        ]),
    )
    .unwrap();
    assert_eq!(cfg.database.pool_size, 9);
    assert_eq!(cfg.database.url, "postgres://root@127.0.0.1/test");
    assert_eq!(cfg.record.batch_size, 5);
}

/// First-hour item 10: a 5-field crontab line printed the cron crate's
/// caret drawing as a literal `\n`. One line, saying what is wrong.
#[test]
fn a_bad_tick_expression_is_one_line_that_says_why() {
    let e = parse_cron("0 * * * *").unwrap_err().to_string();
    assert_eq!(
        e,
        "schedule.tick \"0 * * * *\" has 5 fields (use 6 fields: sec min hour day month weekday, e.g. \"0 0 * * * *\")"
    );
    for bad in ["0 0 25 * * *", "x y z a b c", "0 0 * * * * * *"] {
        let e = parse_cron(bad).unwrap_err().to_string();
        assert!(
            !e.contains('\n') && !e.contains("\\n") && !e.contains('^'),
            "{e:?}"
        );
        assert!(e.starts_with(&format!("schedule.tick {bad:?}")), "{e}");
    }
}

#[test]
fn ops_settings_load_and_bad_ones_say_why_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    std::fs::write(
        &p,
        "[ops]\nreport_to = \"ops@example.com\"\nreport_hour = 0\nreport_tz = \"America/New_York\"\n",
    )
    .unwrap();
    let cfg = Config::load(Some(&p), env(&[])).unwrap();
    assert_eq!(cfg.ops.report_to, "ops@example.com");
    assert_eq!(cfg.ops.report_hour, 0);
    assert_eq!(cfg.ops.tz().unwrap(), chrono_tz::America::New_York);
    for (bad, want) in [
        (
            "report_to = \"x\"",
            ":2:13: [ops] report_to: invalid email address",
        ),
        ("report_hour = 24", ":2:15: [ops] report_hour must be 0-23"),
        ("report_tz = \"Mars/Olympus\"", ":2:13: [ops] report_tz: "),
        ("report_tz = \"UTC\\r\\nX\"", ":2:13: [ops] report_tz: "),
    ] {
        std::fs::write(&p, format!("[ops]\n{bad}\n")).unwrap();
        let e = Config::load(Some(&p), env(&[])).unwrap_err().to_string();
        let want = format!("{}{want}", p.display());
        assert!(e.starts_with(&want), "{bad}: {e}");
        assert!(!e.contains('\n') && !e.contains('\r'), "{e:?}");
    }
}

#[test]
fn the_journal_sits_beside_the_database_not_in_the_outbox() {
    let with = |url: &str, dir: &str| {
        let mut c = Config::default();
        c.database.url = url.into();
        c.queue.journal_dir = dir.into();
        c.journal_dir()
    };
    assert_eq!(
        Config::default().journal_dir(),
        Path::new("data/digestd.db.journal")
    );
    assert_eq!(
        with("sqlite:///srv/d/x.db", ""),
        Path::new("/srv/d/x.db.journal")
    );
    assert_eq!(with("postgres://u@h/db", ""), Path::new(PG_JOURNAL_DIR));
    assert_eq!(with("sqlite://:memory:", ""), Path::new(PG_JOURNAL_DIR));
    assert_eq!(with("postgres://u@h/db", "/var/j"), Path::new("/var/j"));
    let cfg = Config::load(None, env(&[("DIGESTD_QUEUE__JOURNAL_DIR", "2026")])).unwrap();
    assert_eq!(cfg.journal_dir(), Path::new("2026"));
}

#[test]
fn lines_and_columns_count_characters() {
    use super::source::line_column;
    let text = "ab\nçd = 1\n\nx";
    assert_eq!(line_column(text, 0), (1, 1));
    assert_eq!(line_column(text, 3), (2, 1));
    assert_eq!(line_column(text, text.find('=').unwrap()), (2, 4));
    assert_eq!(line_column(text, text.len()), (4, 2));
    assert_eq!(line_column(text, 999), (4, 2));
}

/// Every setting has an example for its errors: its default, or one
/// written for it when the default is empty.
#[test]
fn every_setting_has_an_example() {
    for (section, keys) in explain::defaults() {
        for key in keys.as_table().unwrap().keys() {
            let e = explain::example(section, key, None);
            assert!(e.is_some(), "[{section}] {key} has no example");
            let e = e.unwrap();
            // The example is a setting that loads (a secret's names its
            // environment variable instead).
            if key != "password" && key != "access_token" {
                let (k, v) = e.split_once(" = ").unwrap();
                assert_eq!(k, key);
                let text = format!("[{section}]\n{key} = {v}\n");
                let one: toml::Table = text.parse().unwrap();
                toml::Value::Table(one).try_into::<Config>().unwrap();
            }
        }
    }
}

#[test]
fn unknown_variables_warn_naming_the_closest_setting() {
    let warnings = unknown_variables(&env(&[
        ("DIGESTD_EMAIL_TRANSPORT", "smtp"),
        ("DIGESTD_DATABASE__POOLSIZE", "4"),
        ("DIGESTD_DATABASE_URL", "sqlite://x.db"),
        ("DIGESTD_EMAIL__TRANSPORT", "dir"),
        ("DIGESTD_TEST_DATABASE_URL", "postgres://x"),
        ("DIGESTD_TEST_XMPP", "required"),
        ("DIGESTD_XMPP_PASWORD", "s3cret"),
        ("DIGESTDX", "1"),
        ("OTHER", "1"),
    ]));
    assert_eq!(
        warnings,
        [
            "warning: DIGESTD_EMAIL_TRANSPORT is not a setting and is ignored; did you mean DIGESTD_EMAIL__TRANSPORT? (DIGESTD_<SECTION>__<KEY>, two underscores)",
            "warning: DIGESTD_XMPP_PASWORD is not a setting and is ignored; did you mean DIGESTD_XMPP__PASSWORD? (DIGESTD_<SECTION>__<KEY>, two underscores)",
        ]
    );
    assert!(warnings.iter().all(|w| !w.contains("s3cret")));
    // Ignored by the loader, as warned.
    let cfg = Config::load(None, env(&[("DIGESTD_EMAIL_TRANSPORT", "smtp")])).unwrap();
    assert_eq!(cfg.email.transport, crate::config::EmailTransport::Dir);
}

#[test]
fn the_process_environment_is_read_as_utf8_digestd_variables_only() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let os = |k: &[u8], v: &[u8]| {
        (
            OsString::from_vec(k.to_vec()),
            OsString::from_vec(v.to_vec()),
        )
    };
    let got = env_from_os([
        os(b"DIGESTD_EMAIL__DIR", b"out"),
        os(b"PATH", b"/bin\xff"),
        os(b"DIGESTD_TEST_DATABASE_URL", b"\xff"),
        os(b"HOME", b"/root"),
    ])
    .unwrap();
    assert_eq!(got, env(&[("DIGESTD_EMAIL__DIR", "out")]));
    let e = env_from_os([os(b"DIGESTD_XMPP__PASSWORD", b"s3cret\xff")])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "DIGESTD_XMPP__PASSWORD: the value is not UTF-8 text");
    let e = env_from_os([os(b"DIGESTD_\xff", b"1")])
        .unwrap_err()
        .to_string();
    assert!(e.ends_with(": a variable's name is not UTF-8"), "{e}");
    assert!(!e.contains('\u{fffd}') || !e.contains('\n'), "{e}");
}
