//! Unit tests of `validate`.

use super::*;

#[test]
fn an_unknown_timezone_names_the_one_it_most_likely_meant() {
    let e = |s: &str| timezone(s).unwrap_err().to_string();
    assert_eq!(
        e("europe/berlin"),
        "unknown IANA timezone \"europe/berlin\": did you mean Europe/Berlin?"
    );
    assert!(e("Europe/Berln").ends_with("did you mean Europe/Berlin?"));
    assert!(e("AMERICA/NEW_YORK").ends_with("did you mean America/New_York?"));
    // Nothing close: no guess.
    assert_eq!(e("Mars/Olympus"), "unknown IANA timezone \"Mars/Olympus\"");
    assert_eq!(e("utc+5"), "unknown IANA timezone \"utc+5\"");
}

#[test]
fn cli_instants() {
    let now = DateTime::parse_from_rfc3339("2026-11-25T14:30:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let t = |s: &str| cli_instant("--at", s, now).map(|t| t.to_rfc3339());
    assert_eq!(t("+1h").unwrap(), "2026-11-25T15:30:00+00:00");
    assert_eq!(t("-2d").unwrap(), "2026-11-23T14:30:00+00:00");
    assert_eq!(t("now").unwrap(), "2026-11-25T14:30:00+00:00");
    assert_eq!(
        t("2026-11-23T09:00:00+05:30").unwrap(),
        "2026-11-23T03:30:00+00:00"
    );
    for bad in [
        "",
        "+",
        "-",
        "+0h",
        "+1x",
        "+-1h",
        "++1h",
        "+1h ",
        "+99999999999d",
        "+1h\n",
        "tomorrow",
        "Now",
        " now",
    ] {
        let e = t(bad).unwrap_err().to_string();
        assert!(e.contains("+/-DURATION"), "{bad:?}: {e}");
    }
}

#[test]
fn timezones() {
    assert_eq!(timezone("Asia/Kolkata").unwrap().name(), "Asia/Kolkata");
    assert!(timezone("UTC").is_ok());
    for bad in [
        "",
        "Mars/Olympus",
        "Europe/Paris\n",
        "../etc/passwd",
        "EST5EDT\r\nX: y",
    ] {
        assert!(timezone(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn emails() {
    assert_eq!(
        email("Bob.Smith+tag@Example.COM").unwrap(),
        "Bob.Smith+tag@example.com"
    );
    assert!(email("root@localhost").is_ok());
    let long_local = format!("{}@example.com", "a".repeat(65));
    let long_all = format!("{}@{}.com", "a".repeat(60), "b".repeat(200));
    for bad in [
        "",
        "bob",
        "bob@",
        "@example.com",
        "bob@example",
        "bob@@example.com",
        "bob@example.com\r\nBcc: all@example.com",
        "bob@exa mple.com",
        "bo b@example.com",
        "\"bob\"@example.com",
        ".bob@example.com",
        "bob..x@example.com",
        "bob@-example.com",
        "bob@example..com",
        "bob@[127.0.0.1]",
        "bøb@example.com",
        "bob@example.com\0",
        long_local.as_str(),
        long_all.as_str(),
    ] {
        assert!(email(bad).is_err(), "{bad:?} should be refused");
    }
}

#[test]
fn jids() {
    assert_eq!(jid("alice@localhost").unwrap(), "alice@localhost");
    for bad in [
        "",
        "localhost",
        "alice@localhost/phone",
        "alice@",
        "@localhost",
        "alice@local host",
        "alice@localhost\r\n",
        " alice@localhost",
    ] {
        assert!(jid(bad).is_err(), "{bad:?} should be refused");
    }
}

#[test]
fn phones() {
    assert!(phone("+14155550123").is_ok());
    assert!(phone("+33612345678").is_ok());
    // As people write them, stored in E.164.
    for written in [
        "+1 415 555 0123",
        "+1 (415) 555-0123",
        "+1.415.555.0123",
        "+14155550123",
    ] {
        assert_eq!(phone(written).unwrap(), "+14155550123", "{written:?}");
    }
    for bad in [
        "",
        "14155550123",
        "1 415 555 0123",
        "+",
        "+0123456789",
        "+1234567",
        "+1234567890123456",
        "+1 415 555 0123 ",
        "+1415555012a",
        "+14155550123\n",
        "+1\t415 555 0123",
        "+1 415 555 0123\r\nBcc: x",
        "+ 1 4 1 5 5 5 5 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2",
        "+1 415 555 0123 ext 4",
    ] {
        assert!(phone(bad).is_err(), "{bad:?} should be refused");
    }
}

#[test]
fn days_hours_locales() {
    assert_eq!(weekday("mon").unwrap(), 0);
    assert_eq!(weekday("Sunday").unwrap(), 6);
    assert_eq!(weekday("THU").unwrap(), 3);
    for bad in ["", "m", "mo", "funday", "7", "sun\n"] {
        assert!(weekday(bad).is_err(), "{bad:?}");
    }
    assert!(hour(0).is_ok() && hour(23).is_ok());
    assert!(hour(24).is_err() && hour(-1).is_err());
    assert_eq!(locale("en_GB").unwrap(), "en-GB");
    assert!(locale("zh-Hant-TW").is_ok());
    for bad in ["", "e", "english-language-tag-x", "en-US\r\n", "12-US"] {
        assert!(locale(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn texts_refuse_what_xml_or_a_terminal_cannot_take_and_name_it() {
    for (bad, code) in [
        ("a\u{FFFF}b", "noncharacter (U+FFFF)"),
        ("a\u{FFFE}b", "noncharacter (U+FFFE)"),
        ("a\u{FDD0}b", "noncharacter (U+FDD0)"),
        ("a\u{FDEF}b", "noncharacter (U+FDEF)"),
        ("a\u{1FFFF}b", "noncharacter (U+1FFFF)"),
        ("a\u{10FFFE}b", "noncharacter (U+10FFFE)"),
        ("a\0b", "control character (U+0000, NUL)"),
        ("a\u{1b}[2Jb", "control character (U+001B)"),
        ("a\u{1}b", "control character (U+0001)"),
        ("a\u{1f}b", "control character (U+001F)"),
        ("a\u{7f}b", "control character (U+007F)"),
        ("a\u{2029}b", "separator (U+2029)"),
        ("a\u{2066}b", "override (U+2066)"),
    ] {
        let e = text("title", bad).unwrap_err().to_string();
        assert!(e.starts_with("title contains a"), "{bad:?}: {e}");
        assert!(e.contains(code), "{bad:?}: {e}");
        assert!(!e.contains(['\n', '\r']), "{e}");
    }
    for good in [
        "Lunch 🍱 at noon",
        "会議 — 東京",
        "שלום עולם",
        "مرحبا بالعالم",
        "Ünïcødé ﬁ \u{FDCF} \u{FDF0} \u{FFFD} \u{E000} \u{10000}",
    ] {
        assert_eq!(text("title", good).unwrap(), good);
        assert!(xml_safe(good), "{good:?}");
    }
}

/// Whether all of `s` may stand in an XML document.
fn xml_safe(s: &str) -> bool {
    not_xml(s).is_none()
}

#[test]
fn xml_safe_is_the_xml_char_production() {
    assert!(xml_safe(
        "tab\tlf\ncr\r \u{D7FF}\u{E000}\u{FFFD}\u{10000}\u{10FFFF}"
    ));
    // XML allows the noncharacters other than U+FFFE and U+FFFF.
    assert!(xml_safe("\u{FDD0}\u{1FFFE}"));
    for bad in [
        "\0", "\u{1}", "\u{8}", "\u{b}", "\u{c}", "\u{1f}", "\u{FFFE}", "\u{FFFF}",
    ] {
        assert!(!xml_safe(bad), "{bad:?}");
    }
    assert_eq!(not_xml("ok \u{FDD0} \u{FFFF} \u{1}"), Some('\u{FFFF}'));
    // Multi-line text keeps its line breaks, tabs and direction marks.
    carriable("message", "line\n\tline\r\n\u{200F}").unwrap();
    for (bad, code) in [
        ("a\u{FFFF}", "U+FFFF"),
        ("a\u{FDD0}", "U+FDD0"),
        ("a\u{7}", "U+0007"),
    ] {
        let e = carriable("message", bad).unwrap_err().to_string();
        assert!(
            e.starts_with("message contains a") && e.contains(code),
            "{e}"
        );
    }
}

#[test]
fn other_validators_refuse_noncharacters_too() {
    assert!(timezone("UTC\u{FFFF}").is_err());
    assert!(jid("alice\u{FFFE}@localhost").is_err());
    assert!(email("alice\u{FFFF}@example.com").is_err());
    assert_eq!(escape_for_line("a\u{FFFF}b"), "a\\u{ffff}b");
}

#[test]
fn names_texts_durations() {
    assert!(name("user", "alice.b-1_x").is_ok());
    let too_long = "a".repeat(65);
    for bad in [
        "",
        "-rf",
        "a b",
        "al/ice",
        "al\nice",
        "ålice",
        too_long.as_str(),
    ] {
        assert!(name("user", bad).is_err(), "{bad:?}");
    }
    assert_eq!(text("title", "  Lunch  ").unwrap(), "Lunch");
    assert!(text("title", "a\r\nBcc: x").is_err());
    for bad in [
        "a\u{2028}b",
        "evil\u{202E}txt.exe",
        "x\u{0085}y",
        "bell\u{7}",
    ] {
        assert!(text("title", bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        escape_for_line("a\u{1b}[2J\u{2028}b\tc"),
        "a\\u{1b}[2J\\u{2028}b\\tc"
    );
    assert!(text("title", "   ").is_err());
    assert!(text("title", &"x".repeat(MAX_TEXT + 1)).is_err());
    assert_eq!(duration("90d").unwrap(), chrono::Duration::days(90));
    for bad in ["", "d", "90", "0d", "-5d", "5y", "9999999999999d"] {
        assert!(duration(bad).is_err(), "{bad:?}");
    }
    assert!(uuid("item", "not-a-uuid").is_err());
    assert!(instant("at", "2026-13-01T00:00:00Z").is_err());
}

#[test]
fn an_hour_from_a_form_is_a_whole_hour_of_the_day() {
    assert_eq!(hour_text(" 7 "), Ok(7));
    assert_eq!(hour_text("0"), Ok(0));
    assert_eq!(hour_text("23"), Ok(23));
    let huge = "9".repeat(40);
    for bad in [
        "",
        "24",
        "-1",
        "7.5",
        "noon",
        "0x7",
        "٧",
        huge.as_str(),
        "7\u{0}",
    ] {
        let e = hour_text(bad).unwrap_err();
        assert!(e.line().starts_with("invalid hour "), "{bad:?}: {e}");
        assert!(!e.line().chars().any(char::is_control), "{e}");
        assert!(e.refusal().is_some(), "{bad:?}");
    }
}

#[test]
fn a_quoted_value_escapes_each_character_once() {
    assert_eq!(quoted("22:00-07:00\n"), r#""22:00-07:00\n""#);
    assert_eq!(quoted("a\"b\\c"), r#""a\"b\\c""#);
    // Direction overrides and line separators never reach a terminal raw.
    let q = quoted("x\u{202e}y\u{2028}z\u{1b}[2J");
    assert!(!q.chars().any(is_hostile_char), "{q}");
    assert_eq!(q.matches('\\').count(), 3, "{q}");
    // The validators that quote what they refuse escape it once.
    let e = quiet_hours("22:00-07:00\n").unwrap_err();
    assert!(
        e.line()
            .starts_with(r#"invalid quiet hours "22:00-07:00\n": "#),
        "{e}"
    );
    let e = matrix_id("@ben:example.org\r\n").unwrap_err();
    assert!(e.line().contains(r#""@ben:example.org\r\n""#), "{e}");
}
