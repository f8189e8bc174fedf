//! The settings as every command checks them: loaded by the engine's
//! `config`, then [`check_settings`](super::check_settings) for the
//! channels; each refusal one line naming the file, line and setting.

use std::path::Path;

use super::check_settings;
use crate::config::{Config, MAX_FILE_BYTES};

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn the_shipped_settings_pass_the_check() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/digestd.toml");
    check_settings(&Config::load(Some(&path), env(&[])).unwrap()).unwrap();
    check_settings(&Config::default()).unwrap();
}
/// The audit's finding 10: an error from the environment names the
/// variable and never prints its value.
#[test]
fn a_bad_variable_is_named_and_its_value_not_printed() {
    for (var, val, want) in [
        ("DIGESTD_EMAIL__POOL_SIZE", "s3cret", "DIGESTD_EMAIL__POOL_SIZE: [email] pool_size must be a whole number, e.g. DIGESTD_EMAIL__POOL_SIZE=4"),
        ("DIGESTD_EMAIL__POOL_SIZE", "-7", "DIGESTD_EMAIL__POOL_SIZE: [email] pool_size must be a whole number, 0 or more, e.g. DIGESTD_EMAIL__POOL_SIZE=4"),
        ("DIGESTD_XMPP__TLS", "s3cret", "DIGESTD_XMPP__TLS: [xmpp] tls must be true or false, e.g. DIGESTD_XMPP__TLS=true"),
        ("DIGESTD_XMPP__PASSWROD", "s3cret", "DIGESTD_XMPP__PASSWROD: [xmpp] passwrod is not a setting: did you mean DIGESTD_XMPP__PASSWORD? (config/digestd.toml lists every setting)"),
        ("DIGESTD_XMPP__PASSWORD", "s3cret\r\nx", "DIGESTD_XMPP__PASSWORD: [xmpp] password: no control characters, e.g. DIGESTD_XMPP__PASSWORD in the environment"),
    ] {
        let e = match Config::load_traced(None, env(&[("DIGESTD_SMS__FROM", "ok"), (var, val)])) {
            Err(e) => e,
            Ok((cfg, origins)) => origins.place(check_settings(&cfg).unwrap_err()),
        }
        .to_string();
        assert_eq!(e, want);
        assert!(!e.contains("s3cret") && !e.contains("-7"));
    }
}

#[test]
fn hostile_config_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    for bad in [
        "[database]\nurl = \"mysql://x\"\n",
        "[database]\npool_size = 0\n",
        "[nope]\nx = 1\n",
        "[database]\nunknown = 1\n",
        "not toml at all [",
        "[log]\nlevel = \"[[[bad\"\n",
        "[schedule]\ntick = \"0 * * * *\"\n",
        "[schedule]\ntick = \"61 0 * * * *\"\n",
        "[schedule]\ntick = \"0 0 25 * * *\"\n",
        "[schedule]\ntick = \"every hour\"\n",
        "[schedule]\ntick = \"0 0 * * * *\\n0 0 * * * *\"\n",
        "[schedule]\nlease_seconds = 1\n",
        "[schedule]\ncompose_workers = 0\n",
        "[schedule]\ncompose_workers = 257\n",
        "[schedule]\ntick_chunk = 0\n",
        "[schedule]\ntick_chunk = 1000001\n",
        "[schedule]\ntick_chunk = -5\n",
        "[http]\nadmin_session_hours = 0\n",
        "[http]\nadmin_session_hours = 721\n",
        "[http]\nadmin_session_hours = -1\n",
        "[http]\nmax_feed_entries = 0\n",
        "[http]\nmax_feed_entries = 100001\n",
        "[http]\nmax_feed_entries = \"500\"\n",
        "[http]\ntrusted_proxies = \"localhost\"\n",
        "[http]\ntrusted_proxies = \"10.0.0.0/33\"\n",
        "[http]\ntrusted_proxies = [\"127.0.0.1\"]\n",
        "[digest]\nmax_items = 0\n",
        "[signup]\nexpiry_hours = 0\n",
        "[signup]\nexpiry_hours = 9000\n",
        "[signup]\nper_client_per_hour = -1\n",
        "[signup]\nunknown = 1\n",
        "[digest]\nsms_segments = 11\n",
        "[digest]\nbase_url = \"ftp://x\"\n",
        "[digest]\nbase_url = \"http://a b\"\n",
        "[digest]\nbase_url = \"http://a\\r\\nX-Evil: 1\"\n",
        "[email]\ntransport = \"carrier-pigeon\"\n",
        "[email]\nfrom = \"not an address\"\n",
        "[email]\nfrom = \"a <b@c>\\r\\nBcc: x@y\"\n",
        "[email]\ndir = \"\"\n",
        "[email]\ntransport = \"smtp\"\n",
        "[email]\ntransport = \"smtp\"\nsmtp_url = \"http://mail:25\"\n",
        "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://mail:25\\r\\nX: y\"\n",
        "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://\"\n",
        "[email]\npool_size = 0\n",
        "[email]\nretry_base_seconds = 0\n",
        "[email]\nretry_base_seconds = 100\nretry_cap_seconds = 10\n",
        "[email]\nmax_retries = 0\n",
        "[email]\nbounce_limit = 0\n",
        "[sms]\ntransport = \"carrier-pigeon\"\n",
        "[sms]\ntransport = \"http\"\n",
        "[sms]\ntransport = \"http\"\nendpoint = \"ftp://gw\"\n",
        "[sms]\ntransport = \"http\"\nendpoint = \"http://gw/send\"\nshape = \"xml\"\n",
        "[sms]\nmax_segments = 0\n",
        "[sms]\nauth_header = \"Bearer a\\r\\nX-Evil: 1\"\n",
        "[email]\ntransport = \"pipe\"\npipe_command = \"\"\n",
        "[email]\ntransport = \"pipe\"\npipe_command = \"sendmail\\n-t\"\n",
        "[email]\ntransport = \"db\"\ndb_path = \"\"\n",
        "[email]\ntransport = \"db\"\ndb_path = \"out\\nbox.db\"\n",
        "[xmpp]\ntransport = \"carrier-pigeon\"\n",
        "[xmpp]\ntransport = \"xmpp\"\n",
        "[xmpp]\ntransport = \"xmpp\"\njid = \"no-local-part\"\npassword = \"p\"\n",
        "[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"\"\n",
        "[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"p\\r\\nx\"\n",
        "[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"p\"\ntls = false\nserver = \"chat.example.com:5222\"\n",
        "[xmpp]\ntimeout_seconds = 0\n",
        "[xmpp]\nmax_chars = 5\n",
        "[ops]\nreport_to = \"not an address\"\n",
        "[ops]\nreport_to = \"ops@example.com\\r\\nBcc: x@y\"\n",
        "[ops]\nreport_to = \"a@b, c@d\"\n",
        "[ops]\nreport_hour = 24\n",
        "[ops]\nreport_hour = -1\n",
        "[ops]\nreport_tz = \"Mars/Olympus\"\n",
        "[ops]\nreport_tz = \"\"\n",
        "[ops]\nreport_tz = \"UTC\\nX\"\n",
        "[ops]\nreport_day = 1\n",
        "[queue]\njournal_dir = \"a\\nb\"\n",
        "[queue]\njournal_dir = 1\n",
        "[queue]\nunknown = 1\n",
        "[webhook]\nconcurrency = 0\n",
        "[webhook]\nconcurrency = 65\n",
        "[webhook]\nconcurrency = -1\n",
        "[webhook]\nconcurrency = 1e9\n",
        "[webhook]\nconcurrency = 1000000000\n",
        "[webhook]\nconcurrency = \"four\"\n",
        "[webhook]\ntimeout_seconds = 0\n",
    ] {
        std::fs::write(&p, bad).unwrap();
        let loaded = Config::load(Some(&p), env(&[]));
        let checked = loaded.and_then(|c| check_settings(&c));
        assert!(checked.is_err(), "{bad:?}");
    }
    assert!(Config::load(Some(&dir.path().join("missing.toml")), env(&[])).is_err());
    assert!(Config::load(None, env(&[("DIGESTD_RECORD__BATCH_SIZE", "lots")])).is_err());
}

/// Loads `text` as the file `digestd.toml` of a fresh directory and
/// returns the error line, as `digestd` would print it, with the file's
/// path shortened to its name.
fn refusal(text: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("digestd.toml");
    std::fs::write(&p, text).unwrap();
    let e = match Config::load_traced(Some(&p), env(&[])) {
        Err(e) => e,
        Ok((cfg, origins)) => {
            origins.place(check_settings(&cfg).expect_err("the settings are refused"))
        }
    };
    let line = e.to_string();
    let shown = p.display().to_string();
    assert!(line.starts_with(&shown), "{line}");
    assert!(!line.contains('\n') && !line.contains('\r'), "{line:?}");
    assert!(e.is_bad_input(), "{line}");
    line.replacen(&shown, "digestd.toml", 1)
}

/// Each error names the file, the line and column, the setting as
/// `[section] key`, what it must be and an example of a good value.
#[test]
fn errors_name_the_file_line_setting_and_an_example() {
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
            "[email]\npool_size = 99999999999\n",
            "digestd.toml:2:13: [email] pool_size must be a whole number no larger than 4294967295, e.g. pool_size = 4",
        ),
        (
            "# settings\n\n[email]\npool_sise = 4\n",
            "digestd.toml:4:13: [email] pool_sise is not a setting: did you mean pool_size = 4? (config/digestd.toml lists every setting)",
        ),
        (
            "[database]\nmax_retries = 4\n",
            "digestd.toml:2:15: [database] max_retries is not a setting of [database]: it is one of [email], below its [email] line",
        ),
        (
            "[xmpp]\ntransport = \"xmpp\"\njid = \"\"\npassword = \"p\"\n",
            "digestd.toml:3:7: [xmpp] jid: required with transport \"xmpp\": the service's own account, name@host, e.g. jid = \"digestd@example.org\"",
        ),
        (
            "[sms]\ntransport = \"http\"\nendpoint = \"\"\n",
            "digestd.toml:3:12: [sms] endpoint: required with transport \"http\": the gateway's http:// or https:// URL, e.g. endpoint = \"https://sms.example.org/send\"",
        ),
        (
            "[sms]\ntransport = \"http\"\n",
            "digestd.toml:1:2: [sms] endpoint: required with transport \"http\": the gateway's http:// or https:// URL, e.g. endpoint = \"https://sms.example.org/send\"",
        ),
        (
            "[email]\nfrom = \"digests\"\n",
            "digestd.toml:2:8: [email] from \"digests\": not an address: use an address, or Name <address>, e.g. from = \"digestd <digestd@localhost>\"",
        ),
        (
            "[email]\ntransport = \"carrier-pigeon\"\n",
            "digestd.toml:2:13: [email] transport \"carrier-pigeon\" is not one of dir, smtp, db, pipe, stdout",
        ),
        (
            "[sms]\ntransport = \"smtp\"\n",
            "digestd.toml:2:13: [sms] transport \"smtp\" is not one of dir, http",
        ),
        (
            "[xmpp]\ntransport = \"Xmpp\\r\\nX\"\n",
            "digestd.toml:2:13: [xmpp] transport \"Xmpp\\r\\nX\" is not one of dir, xmpp",
        ),
        (
            "[http]\nlisten = 8080\n",
            "digestd.toml:2:10: [http] listen must be text in double quotes, e.g. listen = \"127.0.0.1:8080\"",
        ),
        (
            "[xmpp]\ntls = \"yes\"\n",
            "digestd.toml:2:7: [xmpp] tls must be true or false, without quotes, e.g. tls = true",
        ),
        (
            "[email]\npool_size = 0\n",
            "digestd.toml:2:13: [email] pool_size must be 1-64, e.g. pool_size = 4",
        ),
        (
            "[webhook]\nconcurrency = 0\n",
            "digestd.toml:2:15: [webhook] concurrency must be 1-64, e.g. concurrency = 4",
        ),
        (
            "[schedule]\nlease_seconds = 1\n",
            "digestd.toml:2:17: [schedule] lease_seconds must be at least 10, e.g. lease_seconds = 600",
        ),
        (
            "pool_size = 3\n",
            "digestd.toml:1:1: pool_size is outside any section: a setting goes below its section's line, e.g. [database] then pool_size = 4",
        ),
        (
            "[emial]\npool_size = 3\n",
            "digestd.toml:1:2: [emial] is not a section: did you mean [email]? (config/digestd.toml lists every setting)",
        ),
        (
            "database = \"sqlite://x.db\"\n",
            "digestd.toml:1:1: [database] must be a table: a [database] line with its settings below it",
        ),
        // CRLF line endings are TOML; the columns count characters.
        (
            "[email]\r\nfrom = \"Zoë <z@x.org>\"\r\n[digest]\r\nmax_items = 0\r\n",
            "digestd.toml:4:13: [digest] max_items must be 1-10000, e.g. max_items = 50",
        ),
        (
            "[digest]\nbase_url = \"Ünïcode\" \nmax_items = \"ten\"\n",
            "digestd.toml:3:13: [digest] max_items must be a whole number, without quotes, e.g. max_items = 50",
        ),
    ] {
        assert_eq!(refusal(text.as_bytes()), want, "{text:?}");
    }
}

/// What the file itself gets wrong: not TOML, not UTF-8, too large; and
/// values carrying CR/LF. One line each, naming the file.
#[test]
fn hostile_files_are_one_line_naming_the_file() {
    let syntax = refusal(b"[email]\nmax_retries = 3 3\n");
    assert!(
        syntax.starts_with("digestd.toml:2:15: not valid TOML: "),
        "{syntax}"
    );
    let header = refusal(b"[email\n");
    assert!(
        header.starts_with("digestd.toml:1:7: not valid TOML: "),
        "{header}"
    );
    assert_eq!(
        refusal(b"[email]\nfrom = \"caf\xe9\"\n"),
        "digestd.toml:2:12: not UTF-8 text: save the settings file as UTF-8"
    );
    // The limit, to the byte: a file of comments at it loads, one past it
    // is refused unread.
    let comments = |n: u64| {
        let mut v = b"[email]\n".to_vec();
        v.resize(n as usize, b'#');
        v
    };
    let dir = tempfile::tempdir().unwrap();
    let at = dir.path().join("at.toml");
    std::fs::write(&at, comments(MAX_FILE_BYTES)).unwrap();
    assert_eq!(
        Config::load(Some(&at), env(&[])).unwrap(),
        Config::default()
    );
    assert!(refusal(&comments(MAX_FILE_BYTES + 1)).ends_with(
        ": larger than 1048576 bytes: not a settings file (the shipped one is a few KiB)"
    ));
    // A raw CR inside a string is not TOML; an escaped one is refused by
    // the setting's own check, and shown escaped.
    let raw = refusal(b"[email]\nfrom = \"a <b@c.org>\rBcc: x@y\"\n");
    assert!(raw.starts_with("digestd.toml:2:"), "{raw}");
    assert_eq!(
        refusal(b"[email]\nfrom = \"a <b@c.org>\\r\\nBcc: x@y\"\n"),
        "digestd.toml:2:8: [email] from \"a <b@c.org>\\r\\nBcc: x@y\": control character, e.g. from = \"digestd <digestd@localhost>\""
    );
    assert_eq!(
        refusal(b"[http]\nlisten = \"127.0.0.1:80\\n80\"\n"),
        "digestd.toml:2:10: [http] listen \"127.0.0.1:80\\n80\" is not host:port (e.g. 127.0.0.1:8080)"
    );
}
