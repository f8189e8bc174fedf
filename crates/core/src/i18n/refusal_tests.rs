//! Unit tests of `i18n::refusal`: each validator's refusal said in the
//! shipped languages, hostile values shown escaped.

use super::*;
use crate::error::Invalid;
use crate::validate::{email, hour, hour_text, locale, matrix_id, quiet_hours, timezone};

/// The refusal `r` gave, or a panic naming `what`.
fn refusal<T: std::fmt::Debug>(what: &str, r: Result<T, Invalid>) -> Invalid {
    let e = r.expect_err(what);
    assert!(e.refusal().is_some(), "{what}: no refusal on {e}");
    e
}

/// Every refusal a validator gives: its key (without `refusal-`), the
/// refusal, and a part of its English line (what the CLI and the API
/// say, unchanged).
fn every_refusal() -> Vec<(&'static str, Invalid, &'static str)> {
    let tz = |s: &str| refusal("tz", timezone(s));
    let q = |s: &str| refusal("quiet", quiet_hours(s));
    let mut out = vec![
        ("timezone-malformed", tz(""), "invalid timezone \"\""),
        (
            "timezone-unknown",
            tz("Mars/Olympus"),
            "unknown IANA timezone \"Mars/Olympus\"",
        ),
        (
            "timezone-nearest",
            tz("Europe/Berln"),
            ": did you mean Europe/Berlin?",
        ),
        (
            "locale",
            refusal("locale", locale("english!")),
            "use a tag like en-US",
        ),
        (
            "hour",
            refusal("hour", hour_text("noon")),
            "invalid hour \"noon\": use 0-23",
        ),
        ("quiet-long", q(&"2".repeat(40)), "longer than 32 bytes"),
        (
            "quiet-char",
            q("22:00–07:00"),
            "U+2013 is not an ASCII digit or '-'",
        ),
        ("quiet-dash", q("22:00"), "no '-' between start and end"),
        (
            "quiet-start",
            q("25:00-07:00"),
            "start \"25:00\" is not HH:MM",
        ),
        ("quiet-end", q("22:00-7:00"), "end \"7:00\" is not HH:MM"),
        ("quiet-same", q("22:00-22:00"), "start and end are the same"),
    ];
    out.extend(address_refusals());
    out
}

/// [`every_refusal`]'s Matrix IDs and email addresses.
fn address_refusals() -> Vec<(&'static str, Invalid, &'static str)> {
    let m = |s: &str| refusal("matrix", matrix_id(s));
    let e = |s: &str| refusal("email", email(s));
    vec![
        ("matrix-empty", m(""), "invalid Matrix ID \"\": it is empty"),
        (
            "matrix-long",
            m(&format!("@{}:x.org", "a".repeat(300))),
            "longer than 255 bytes",
        ),
        (
            "matrix-space",
            m("@a b:example.org"),
            "it contains white space",
        ),
        (
            "matrix-char",
            m("@alicé:example.org"),
            "a control or non-ASCII character",
        ),
        (
            "matrix-no-server",
            m("@alice"),
            "it names no server (:server)",
        ),
        (
            "matrix-no-local",
            m("@:example.org"),
            "its local part is empty",
        ),
        (
            "matrix-sigil",
            m("alice:example.org"),
            "neither @ (a user) nor ! (a room)",
        ),
        (
            "matrix-port",
            m("@alice:example.org:0"),
            "its server's port is not 1-65535",
        ),
        (
            "matrix-server",
            m("@alice:exa_mple.org"),
            "its server name is not a host name",
        ),
        (
            "email-control",
            e("a@b.example\r\nBcc: x@y"),
            "contains a control character",
        ),
        (
            "email-non-ascii",
            e("jörg@example.de"),
            "non-ASCII addresses are not supported",
        ),
        (
            "email-long",
            e(&format!("{}@example.com", "a".repeat(250))),
            "longer than 254 octets",
        ),
        (
            "email-no-at",
            e("alice.example.com"),
            "\"alice.example.com\": no '@'",
        ),
        (
            "email-local-length",
            e("@example.com"),
            "local part must be 1-64 octets",
        ),
        (
            "email-dots",
            e(".alice@example.com"),
            "misplaced '.' in local part",
        ),
        ("email-quoting", e("al(ice@example.com"), "needs quoting"),
        (
            "email-domain",
            e("alice@exa_mple.com"),
            "domain is not a valid host name",
        ),
        (
            "email-no-dot",
            e("alice@example"),
            "domain needs a dot (e.g. example.com)",
        ),
    ]
}

#[test]
fn each_refusal_has_its_key_and_keeps_its_english_line() {
    let all = every_refusal();
    let mut keys: Vec<&str> = all.iter().map(|(k, _, _)| *k).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), all.len(), "one refusal per kind");
    for (key, e, line) in &all {
        assert_eq!(e.refusal().unwrap().key(), format!("refusal-{key}"), "{e}");
        assert!(e.line().contains(line), "{key}: {e}");
        assert_eq!(e.to_string(), e.line());
    }
}

#[test]
fn each_refusal_is_said_in_every_shipped_language() {
    let c = catalogs();
    for (_, e, _) in every_refusal() {
        let r = e.refusal().unwrap();
        let key = r.key();
        let en = r.say(Locale::En);
        for l in Locale::ALL {
            assert!(c.has_own(l, key), "{} lacks {key}", l.tag());
            let said = r.say(l);
            assert!(
                !said.is_empty() && !said.contains('{'),
                "{}: {key}: {said}",
                l.tag()
            );
            assert!(!said.contains("refusal-"), "{}: {key}: {said}", l.tag());
            assert!(!said.contains('\n') && !said.contains('\r'), "{said}");
            if l != Locale::En {
                assert_ne!(said, en, "{}: {key} is English", l.tag());
            }
        }
    }
}

#[test]
fn refusals_read_as_written_in_two_languages_and_more() {
    let tz = || timezone("Europe/Berln");
    let dash = || quiet_hours("22:00–07:00");
    let locale = || locale("english!");
    let port = || matrix_id("@alice:example.org:0");
    let at = || email("alice.example.com");
    let long = format!("@{}:example.org", "a".repeat(300));
    for (e, l, want) in [
        (tz().unwrap_err(), Locale::En, "unknown IANA timezone “Europe/Berln”: did you mean Europe/Berlin?"),
        (tz().unwrap_err(), Locale::De, "„Europe/Berln“ ist keine bekannte IANA-Zeitzone – meinten Sie Europe/Berlin?"),
        (tz().unwrap_err(), Locale::Ja, "「Europe/Berln」というIANAタイムゾーンはありません。Europe/Berlin のことですか？"),
        (dash().unwrap_err(), Locale::En, "invalid quiet hours “22:00–07:00”: U+2013 is not an ASCII digit or “-” (use HH:MM-HH:MM, e.g. 22:00-07:00, or leave the field empty for none)"),
        (dash().unwrap_err(), Locale::Fr, "heures calmes « 22:00–07:00 » invalides : U+2013 n’est ni un chiffre ASCII ni un « - » (écrivez HH:MM-HH:MM, p. ex. 22:00-07:00, ou laissez le champ vide pour n’en avoir aucune)"),
        (quiet_hours("22:00-7:00").unwrap_err(), Locale::De, "ungültige Ruhezeiten „22:00-7:00“: das Ende „7:00“ hat nicht das Format HH:MM (schreiben Sie HH:MM-HH:MM, z. B. 22:00-07:00, oder lassen Sie das Feld für keine Ruhezeiten leer)"),
        (locale().unwrap_err(), Locale::En, "invalid locale “english!”: use a tag like en-US"),
        (hour(24).unwrap_err(), Locale::En, "invalid hour “24”: use a whole hour from 0 to 23"),
        (hour_text(" 7.5 ").unwrap_err(), Locale::De, "„ 7.5 “ ist keine gültige Stunde: geben Sie eine volle Stunde von 0 bis 23 an"),
        (locale().unwrap_err(), Locale::Pt, "“english!” não é um código de idioma válido: use um código como pt-BR"),
        (port().unwrap_err(), Locale::Es, "ID de Matrix no válido «@alice:example.org:0»: el puerto del servidor no está entre 1 y 65535 (usa @usuario:servidor o !sala:servidor)"),
        (port().unwrap_err(), Locale::De, "ungültige Matrix-ID „@alice:example.org:0“: der Port des Servers liegt nicht zwischen 1 und 65535 (verwenden Sie @benutzer:server oder !raum:server)"),
        (matrix_id(&long).unwrap_err(), Locale::Fr, "identifiant Matrix « @aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa… » invalide : il dépasse 255 octets (utilisez @utilisateur:serveur ou !salon:serveur)"),
        (at().unwrap_err(), Locale::En, "invalid email address “alice.example.com”: it has no “@”"),
        (at().unwrap_err(), Locale::Es, "dirección de correo no válida «alice.example.com»: falta la «@»"),
        (at().unwrap_err(), Locale::Ja, "メールアドレス「alice.example.com」が正しくありません。「@」がありません"),
    ] {
        assert_eq!(e.refusal().unwrap().say(l), want, "{}", l.tag());
    }
}

#[test]
fn hostile_values_are_shown_escaped_clipped_and_on_one_line() {
    let big = "x".repeat(10 * 1024);
    let hostile = [
        "Europe/Paris\r\nX-Evil: 1",
        "<script>alert(1)</script>",
        "\u{202E}sirap/eporue",
        "a\u{0}b\u{1b}[31m",
        big.as_str(),
    ];
    for v in hostile {
        let refused: Vec<Invalid> = vec![
            timezone(v).unwrap_err(),
            locale(v).unwrap_err(),
            quiet_hours(v).unwrap_err(),
            matrix_id(v).unwrap_err(),
            email(v).unwrap_err(),
            hour_text(v).unwrap_err(),
        ];
        for e in refused {
            let r = e.refusal().unwrap_or_else(|| panic!("no refusal: {e}"));
            for l in [Locale::En, Locale::De, Locale::Ja] {
                let said = r.say(l);
                let bad = |c: char| c.is_control() || ('\u{202A}'..='\u{202E}').contains(&c);
                assert!(!said.chars().any(bad), "{}: {said:?}", r.key());
                assert!(
                    said.chars().count() < 400,
                    "{}: {} chars",
                    r.key(),
                    said.len()
                );
                if v.contains('\r') && r.key() != "refusal-matrix-empty" {
                    assert!(said.contains("\\r\\nX-Evil"), "{}: {said}", r.key());
                }
                if v.starts_with('\u{202E}') {
                    assert!(said.contains("\\u{202e}sirap"), "{}: {said}", r.key());
                }
                if v.starts_with("<script>") && r.key() != "refusal-quiet-long" {
                    // Shown as text: the page's template escapes it for HTML.
                    assert!(
                        said.contains("<script>alert(1)</scr"),
                        "{}: {said}",
                        r.key()
                    );
                }
                if v.len() > Refusal::SHOWN {
                    assert!(
                        said.contains(&format!("{}…", "x".repeat(Refusal::SHOWN)))
                            || !v.starts_with('x'),
                        "{said}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_value_is_clipped_only_past_its_shown_length() {
    assert_eq!(
        shown(&"a".repeat(Refusal::SHOWN)),
        "a".repeat(Refusal::SHOWN)
    );
    assert_eq!(
        shown(&"a".repeat(Refusal::SHOWN + 1)),
        format!("{}…", "a".repeat(Refusal::SHOWN))
    );
    assert_eq!(
        shown(&"é".repeat(Refusal::SHOWN)),
        "é".repeat(Refusal::SHOWN)
    );
    assert_eq!(shown("a\r\nb\u{202E}c"), "a\\r\\nb\\u{202e}c");
    assert_eq!(shown(""), "");
    // What a refusal keeps of a long value is bounded too.
    let r = Refusal::new(RefusalKind::Locale, &"z".repeat(10_000));
    assert_eq!(r.value().chars().count(), Refusal::SHOWN + 1);
}
