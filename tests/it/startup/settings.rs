//! Settings refused at start: one line naming the file, the line and
//! column, the setting and an example of a good value (exit 2, nothing
//! created); `DIGESTD_*` variables that are no setting's are warned about;
//! and every setting is documented.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{digestd_in, refusal};

/// `digestd --config digestd.toml user list` with the file `text`, refused:
/// the line it printed. Nothing may have been created.
fn refused(text: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("digestd.toml"), text).unwrap();
    let out = digestd_in(
        dir.path(),
        &["--config", "digestd.toml", "user", "list"],
        &[],
    );
    let line = refusal(&out, &String::from_utf8_lossy(text));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        [OsStr::new("digestd.toml")],
        "{line}: nothing created"
    );
    line
}

#[test]
fn a_refused_setting_is_named_with_its_line_and_an_example() {
    for (text, want) in [
        (
            "[email]\nmax_retries = \"3\"\n",
            "digestd.toml:2:15: [email] max_retries must be a whole number, without quotes, e.g. max_retries = 3",
        ),
        (
            "[database]\npool_size = -1\n",
            "digestd.toml:2:13: [database] pool_size must be a whole number, 0 or more, e.g. pool_size = 4",
        ),
        (
            "[email]\n\n# sessions\npool_sise = 8\n",
            "digestd.toml:4:13: [email] pool_sise is not a setting: did you mean pool_size = 4? (config/digestd.toml lists every setting)",
        ),
        (
            "[xmpp]\ntransport = \"xmpp\"\njid = \"\"\npassword = \"pw\"\n",
            "digestd.toml:3:7: [xmpp] jid: required with transport \"xmpp\": the service's own account, name@host, e.g. jid = \"digestd@example.org\"",
        ),
        (
            "[sms]\ntransport = \"http\"\nendpoint = \"\"\n",
            "digestd.toml:3:12: [sms] endpoint: required with transport \"http\": the gateway's http:// or https:// URL, e.g. endpoint = \"https://sms.example.org/send\"",
        ),
        (
            "[email]\nfrom = \"digests\"\n",
            "digestd.toml:2:8: [email] from \"digests\": not an address: use an address, or Name <address>, e.g. from = \"digestd <digestd@localhost>\"",
        ),
        // Wrong types.
        (
            "[http]\ntrusted_proxies = [\"127.0.0.1\"]\n",
            "digestd.toml:2:19: [http] trusted_proxies must be text in double quotes, e.g. trusted_proxies = \"127.0.0.1, ::1\"",
        ),
        (
            "[http]\nenabled = 1\n",
            "digestd.toml:2:11: [http] enabled must be true or false, e.g. enabled = true",
        ),
        (
            "[schedule]\ntick_chunk = 2.5\n",
            "digestd.toml:2:14: [schedule] tick_chunk must be a whole number, e.g. tick_chunk = 20000",
        ),
        // CR/LF: in a value, escaped; CRLF line endings are TOML.
        (
            "[ops]\nreport_to = \"ops@example.org\\r\\nBcc: x@y\"\n",
            "digestd.toml:2:13: [ops] report_to: invalid email address \"ops@example.org\\r\\nBcc: x@y\": ",
        ),
        (
            "[email]\r\nretry_base_seconds = 600\r\nretry_cap_seconds = 60\r\n",
            "digestd.toml:2:22: [email] retry_base_seconds must be at least 1 and at most retry_cap_seconds, e.g. retry_base_seconds = 300",
        ),
    ] {
        let line = refused(text.as_bytes());
        assert!(line.starts_with(want), "{text:?}:\n got {line}\nwant {want}");
    }
}

#[test]
fn a_file_that_is_not_toml_utf8_or_small_is_one_line() {
    let syntax = refused(b"[email]\nmax_retries = 3\npool_size 4\n");
    assert!(
        syntax.starts_with("digestd.toml:3:11: not valid TOML: "),
        "{syntax}"
    );
    assert_eq!(
        refused(b"[email]\ndir = \"out\xff\"\n"),
        "digestd.toml:2:11: not UTF-8 text: save the settings file as UTF-8"
    );
    let raw_cr = refused(b"[email]\ndir = \"out\rbox\"\n");
    assert!(raw_cr.starts_with("digestd.toml:2:"), "{raw_cr}");
    let mut huge = b"[email]\ndir = \"".to_vec();
    huge.resize(3 << 20, b'x');
    huge.extend_from_slice(b"\"\n");
    assert_eq!(
        refused(&huge),
        "digestd.toml: larger than 1048576 bytes: not a settings file (the shipped one is a few KiB)"
    );
}

/// Without --config, `config/digestd.toml` is read, and named so.
#[test]
fn the_default_file_is_named_as_it_is_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("config")).unwrap();
    std::fs::write(
        dir.path().join("config/digestd.toml"),
        "[schedule]\nlease_seconds = 5\n",
    )
    .unwrap();
    let out = digestd_in(dir.path(), &["init"], &[]);
    assert_eq!(
        refusal(&out, "lease_seconds"),
        "config/digestd.toml:2:17: [schedule] lease_seconds must be at least 10, e.g. lease_seconds = 600"
    );
    assert!(!dir.path().join("data").exists());
}

#[test]
fn a_refused_variable_is_named_and_its_value_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    for (var, value, want) in [
        (
            "DIGESTD_EMAIL__MAX_RETRIES",
            &b"s3cret"[..],
            "DIGESTD_EMAIL__MAX_RETRIES: [email] max_retries must be a whole number, e.g. DIGESTD_EMAIL__MAX_RETRIES=3",
        ),
        (
            "DIGESTD_XMPP__PASSWORD",
            b"s3cret\xff",
            "DIGESTD_XMPP__PASSWORD: the value is not UTF-8 text",
        ),
        (
            "DIGESTD_SMS__ENDPONT",
            b"s3cret",
            "DIGESTD_SMS__ENDPONT: [sms] endpont is not a setting: did you mean DIGESTD_SMS__ENDPOINT? (config/digestd.toml lists every setting)",
        ),
    ] {
        let out = digestd_in(dir.path(), &["init"], &[(var, OsStr::from_bytes(value))]);
        assert_eq!(refusal(&out, var), want);
    }
    assert!(!dir.path().join("data").exists());
}

/// `[webhook] concurrency` refuses what is not 1-64, in the file and in
/// its variable: one line each, naming where and giving an example.
#[test]
fn hostile_webhook_concurrency_settings_are_one_line() {
    let must = "[webhook] concurrency must be";
    for (value, want) in [
        ("0", format!("{must} 1-64, e.g. concurrency = 4")),
        ("65", format!("{must} 1-64, e.g. concurrency = 4")),
        ("1000000000", format!("{must} 1-64, e.g. concurrency = 4")),
        (
            "-1",
            format!("{must} a whole number, 0 or more, e.g. concurrency = 4"),
        ),
        (
            "1e9",
            format!("{must} a whole number, e.g. concurrency = 4"),
        ),
        (
            "2.5",
            format!("{must} a whole number, e.g. concurrency = 4"),
        ),
        (
            "\"four\"",
            format!("{must} a whole number, without quotes, e.g. concurrency = 4"),
        ),
        (
            "[4]",
            format!("{must} a whole number, e.g. concurrency = 4"),
        ),
    ] {
        let line = refused(format!("[webhook]\nconcurrency = {value}\n").as_bytes());
        assert_eq!(line, format!("digestd.toml:2:15: {want}"), "{value}");
    }
    let dir = tempfile::tempdir().unwrap();
    let var = "DIGESTD_WEBHOOK__CONCURRENCY";
    for (value, want) in [
        ("0", "must be 1-64"),
        ("four", "must be a whole number"),
        ("-1", "must be a whole number, 0 or more"),
    ] {
        let out = digestd_in(dir.path(), &["init"], &[(var, OsStr::new(value))]);
        assert_eq!(
            refusal(&out, var),
            format!("{var}: [webhook] concurrency {want}, e.g. {var}=4"),
            "{value}"
        );
    }
    assert!(!dir.path().join("data").exists());
}

/// A `DIGESTD_*` variable that is no setting's (one underscore where two
/// belong) is not silently ignored: a warning names the closest setting's,
/// and the command runs.
#[test]
fn an_unknown_variable_is_a_warning_naming_the_closest() {
    let dir = tempfile::tempdir().unwrap();
    let smtp = OsStr::new("smtp");
    let out = digestd_in(
        dir.path(),
        &["init"],
        &[
            ("DIGESTD_EMAIL_TRANSPORT", smtp),
            ("DIGESTD_TEST_ANYTHING", smtp),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "digestd: warning: DIGESTD_EMAIL_TRANSPORT is not a setting and is ignored; did you mean DIGESTD_EMAIL__TRANSPORT? (DIGESTD_<SECTION>__<KEY>, two underscores)\n"
    );
    // The documented ones, and the test suites' own, say nothing.
    let url = OsStr::new("sqlite://data/digestd.db");
    let quiet = digestd_in(
        dir.path(),
        &["user", "list"],
        &[
            ("DIGESTD_DATABASE_URL", url),
            ("DIGESTD_EMAIL__TRANSPORT", OsStr::new("dir")),
            ("DIGESTD_TEST_DATABASE_URL", OsStr::new("postgres://x")),
            ("DIGESTD_TEST_XMPP", OsStr::new("required")),
        ],
    );
    assert!(quiet.status.success(), "{quiet:?}");
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
}

/// Every setting of `Config::default()` is in `docs/configuration.md` (as
/// `section.key`) and in the sample file, `config/digestd.toml` (as `key =`
/// below its section's line, perhaps commented out).
#[test]
fn every_setting_is_documented_and_in_the_sample_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/configuration.md")).unwrap();
    let sample = std::fs::read_to_string(root.join("config/digestd.toml")).unwrap();
    let all = toml::Table::try_from(digestd::config::Config::default()).unwrap();
    let mut missing = Vec::new();
    let mut count = 0;
    for (section, keys) in &all {
        let keys = keys.as_table().expect("each section is a table");
        let block = sample
            .split_once(&format!("\n[{section}]\n"))
            .map(|(_, rest)| rest.split("\n[").next().unwrap_or(rest))
            .unwrap_or("");
        for key in keys.keys() {
            count += 1;
            if !docs.contains(&format!("`{section}.{key}`")) {
                missing.push(format!("docs/configuration.md: {section}.{key}"));
            }
            let written = block.lines().any(|l| {
                let l = l.trim_start_matches(['#', ' ']);
                l.strip_prefix(key.as_str())
                    .is_some_and(|r| r.trim_start().starts_with('='))
            });
            if !written {
                missing.push(format!("config/digestd.toml: [{section}] {key}"));
            }
        }
    }
    assert!(count > 60, "the walk found the settings: {count}");
    assert!(missing.is_empty(), "not documented: {missing:#?}");
}
