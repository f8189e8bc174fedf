//! A field's own check refusing a value on the manage page, said in the
//! reader's language, through the real server on each back end: asha
//! (de-DE) gets her bad zone, locale tag, quiet hours and Matrix ID
//! refused in German, bo (ja-JP) his quiet hours in Japanese, with the
//! value they typed shown escaped (CR/LF, `<script>`, U+202E, 10 KB);
//! nothing is written. The API keeps the validator's English line.
//! Expected texts are written out by hand from the catalogues.

use crate::common;
use crate::http_pages_i18n::speaks;

use common::at;
use common::pages::{code, csrf, post_form, snapshot, world, NOW};
use common::web::{each_backend, Answer, Web};
use digestd::access::Scope;
use digestd::db::DbConn;

/// The world of the pages' tests with asha reading German and bo
/// Japanese: the paths of their manage pages.
fn readers(c: &mut DbConn) -> (String, String) {
    let w = world(c);
    speaks(c, "asha", "de-DE");
    speaks(c, "bo", "ja-JP");
    (
        format!("/s/{}", code(c, w.asha)),
        format!("/s/{}", code(c, w.bo)),
    )
}

/// The page's one line of refusal, as the HTML holds it.
fn error_line(a: &Answer) -> &str {
    let mark = "<p class=\"error\" role=\"alert\">";
    let i = a
        .text
        .find(mark)
        .unwrap_or_else(|| panic!("no error in {}", a.text))
        + mark.len();
    &a.text[i..i + a.text[i..].find("</p>").unwrap()]
}

/// Posts the preferences form of the manage page at `path` with `field`
/// set to `value`: the refusal, checked to have written nothing.
fn refused(web: &Web, c: &mut DbConn, path: &str, field: &str, value: &str) -> String {
    let token = csrf(&web.get(path, None).text);
    let before = snapshot(c);
    let action = if field == "matrix" { "matrix" } else { "prefs" };
    let a = post_form(
        web,
        path,
        &[("csrf", &token), ("action", action), (field, value)],
    );
    assert_eq!(a.status, 400, "{field}={value:.40?}: {}", a.text);
    assert_eq!(snapshot(c), before, "{field}={value:.40?}");
    error_line(&a).to_string()
}

#[test]
fn a_german_readers_field_refusals_are_german() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let (path, _) = readers(&mut c);
        for (field, value, want) in [
            (
                "timezone",
                "Europe/Berln",
                "„Europe/Berln“ ist keine bekannte IANA-Zeitzone – meinten Sie Europe/Berlin?",
            ),
            (
                "timezone",
                "Mars/Olympus",
                "„Mars/Olympus“ ist keine bekannte IANA-Zeitzone: wählen Sie eine aus der Liste",
            ),
            (
                "locale",
                "deutsch",
                "„deutsch“ ist kein gültiges Sprachkürzel: verwenden Sie ein Kürzel wie de-DE",
            ),
            (
                "quiet_hours",
                "22:00-22:00",
                "ungültige Ruhezeiten „22:00-22:00“: Beginn und Ende sind gleich (schreiben Sie HH:MM-HH:MM, z. B. 22:00-07:00, oder lassen Sie das Feld für keine Ruhezeiten leer)",
            ),
            (
                "matrix",
                "@asha",
                "ungültige Matrix-ID „@asha“: der Server fehlt (:server) (verwenden Sie @benutzer:server oder !raum:server)",
            ),
            (
                "daily_hour",
                "25",
                "„25“ ist keine gültige Stunde: geben Sie eine volle Stunde von 0 bis 23 an",
            ),
            (
                "daily_hour",
                "acht",
                "„acht“ ist keine gültige Stunde: geben Sie eine volle Stunde von 0 bis 23 an",
            ),
        ] {
            let said = refused(web, &mut c, &path, field, value);
            assert_eq!(said, want, "{field}={value}");
        }
        // The API says the validator's line in English, as before.
        let t = web.token("ops", Scope::Admin);
        let a = web.put("/api/v1/users/asha", Some(&t), r#"{"tz":"Europe/Berln"}"#);
        assert_eq!(a.status, 400, "{}", a.text);
        assert_eq!(
            a.error(),
            "unknown IANA timezone \"Europe/Berln\": did you mean Europe/Berlin?"
        );
    });
}

#[test]
fn hostile_values_are_shown_escaped_in_the_readers_language() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let (asha, bo) = readers(&mut c);
        let big = "x".repeat(10 * 1024);
        let clipped = format!("„{}…“", "x".repeat(64));
        for field in ["timezone", "locale", "quiet_hours", "matrix"] {
            let said = refused(web, &mut c, &asha, field, "<script>alert(1)</script>");
            assert!(
                said.contains("„&#60;script&#62;alert(1)&#60;/script&#62;“"),
                "{field}: {said}"
            );
            let said = refused(web, &mut c, &asha, field, "Europe/Paris\r\nX-Evil: 1");
            assert!(
                said.contains("Europe/Paris\\r\\nX-Evil: 1"),
                "{field}: {said}"
            );
            let said = refused(web, &mut c, &asha, field, "\u{202E}sirap/eporue");
            assert!(
                said.contains("„\\u{202e}sirap/eporue“") && !said.contains('\u{202E}'),
                "{field}: {said}"
            );
            let said = refused(web, &mut c, &asha, field, &big);
            assert!(
                said.contains(&clipped) && said.len() < 500,
                "{field}: {said}"
            );
            // bo reads it in Japanese.
            let said = refused(web, &mut c, &bo, field, "<script>");
            assert!(said.contains("「&#60;script&#62;」"), "{field}: {said}");
            assert!(
                said.contains("ありません") || said.contains("ください"),
                "{said}"
            );
        }
        assert_eq!(
            refused(web, &mut c, &bo, "quiet_hours", "22:00–07:00"),
            "通知を控える時間帯「22:00–07:00」が正しくありません。U+2013 は半角数字でも「-」でもありません。HH:MM-HH:MM の形式（例: 22:00-07:00）で入力するか、設定しない場合は空欄にしてください"
        );
    });
}
