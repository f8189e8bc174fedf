//! The person's pages in their language, through the real server on each
//! back end: asha (de-DE) reads her manage page, its notices and
//! refusals, her unsubscribe page, its undo and the one-click answer in
//! German with German day names and `<html lang="de">`; bo (ja-JP) reads
//! his in Japanese; `?lang=` overrides only when it is exactly a shipped
//! tag; a bad link answers in the visitor's `Accept-Language`; the whole
//! digest behind its signed link is in the recipient's language. Expected
//! texts are written out by hand from the catalogues.

use crate::common;

use common::at;
use common::pages::{code, csrf, get_as, post_form, world, NOW};
use common::web::{each_backend, Answer};
use digestd::db::DbConn;
use digestd::parties::UserChanges;

/// Sets `who`'s locale as `user set --locale` does.
pub(crate) fn speaks(c: &mut DbConn, who: &str, locale: &str) {
    let ch = UserChanges {
        locale: Some(locale.into()),
        ..Default::default()
    };
    digestd::manage::update_user(c, who, &ch).unwrap();
}

/// No catalogue key shows through (a key a catalogue lacks is written as
/// itself), and none of the English words the page had before.
fn no_keys_nor_english(a: &Answer, english: &[&str]) {
    for key in [
        "manage-",
        "done-",
        "when-",
        "kind-",
        "contact-",
        "page-",
        "sub-by",
        "unsubscribe-",
    ] {
        assert!(!a.text.contains(key), "{key} in {}", a.text);
    }
    for e in english {
        assert!(!a.text.contains(e), "{e:?} in {}", a.text);
    }
}

#[test]
fn a_german_readers_manage_page_notices_and_refusals_are_german() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        speaks(&mut c, "asha", "de-DE");
        let code = code(&mut c, w.asha);
        let path = format!("/s/{code}");
        // Her stored locale wins over the browser's English.
        let a = get_as(web, &path, "en-US,en;q=0.9");
        assert_eq!(a.status, 200, "{}", a.text);
        for want in [
            "<html lang=\"de\">",
            "<title>Ihre Übersichten · digestd</title>",
            "<h1>Ihre Übersichten, asha</h1>",
            "Zeiten in Europe/Madrid (CET), im 24-Stunden-Format.",
            "<strong>Calendar</strong>: Änderungen",
            "Täglich um 09:00 · per E-Mail",
            "<li>E-Mail: a***@example.com",
            "<strong>alle Sammlungen</strong>: anstehende Einträge",
            "Wöchentlich am Montag um 08:00",
            "Wochen beginnen am (derzeit Montag)",
            "<option value=\"tue\">Dienstag</option>",
            "<summary>Wie oft und wohin</summary>",
            ">Alle Übersichten stoppen</button>",
        ] {
            assert!(a.text.contains(want), "{want:?} in {}", a.text);
        }
        no_keys_nor_english(&a, &["Your digests", "Daily at", "Monday", "Subscriptions"]);

        // A change's notice after the 303, in German.
        let t = csrf(&a.text);
        let id = w.asha_daily.0.to_string();
        let p = post_form(
            web,
            &path,
            &[("csrf", &t), ("action", "pause"), ("subscription", &id)],
        );
        assert_eq!(p.status, 303);
        let a = web.get(&format!("{path}?done=pause"), None);
        assert!(
            a.text
                .contains("Pausiert. Es wird nichts gesendet, bis Sie es fortsetzen."),
            "{}",
            a.text
        );
        assert!(
            a.text.contains("<span class=\"paused\">pausiert</span>"),
            "{}",
            a.text
        );
        // The page's own refusal, in German: the page again, 400.
        let p = post_form(
            web,
            &path,
            &[("csrf", &t), ("action", "end"), ("subscription", &id)],
        );
        assert_eq!(p.status, 400);
        assert!(p.text.contains("setzen Sie das Häkchen"), "{}", p.text);
        assert!(p.text.contains("<html lang=\"de\">"));
        // A stale form token: the 403 page in her language.
        let p = post_form(web, &path, &[("csrf", "x"), ("action", "stop")]);
        assert_eq!(p.status, 403);
        assert!(p.text.contains("Formular abgelaufen"), "{}", p.text);
    });
}

#[test]
fn lang_in_the_query_overrides_only_as_a_shipped_tag() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        speaks(&mut c, "bo", "ja-JP");
        let code = code(&mut c, w.bo);
        let a = web.get(&format!("/s/{code}"), None);
        assert!(a.text.contains("<html lang=\"ja\">"), "{}", a.text);
        assert!(
            a.text.contains("<h1>boさんのダイジェスト</h1>"),
            "{}",
            a.text
        );
        // New York, and Japanese reads the 24-hour clock.
        assert!(a.text.contains("毎日 07:00"), "{}", a.text);
        no_keys_nor_english(&a, &["Your digests", "Daily at"]);
        let a = web.get(&format!("/s/{code}?lang=fr"), None);
        assert!(a.text.contains("<html lang=\"fr\">"), "{}", a.text);
        assert!(a.text.contains("Vos résumés, bo"), "{}", a.text);
        assert!(a.text.contains("Tous les jours à 07:00"), "{}", a.text);
        for hostile in [
            "lang=../../etc/passwd",
            "lang=fr-FR",
            "lang=FR",
            "lang=%3Cscript%3E",
            "lang=fr%00",
            "lang=",
        ] {
            let a = web.get(&format!("/s/{code}?{hostile}"), None);
            assert_eq!(a.status, 200, "{hostile}");
            assert!(
                a.text.contains("<html lang=\"ja\">"),
                "{hostile}: {}",
                a.text
            );
        }
        // A bad link: nobody known, so the visitor's language.
        let bad = get_as(web, &format!("/s/{}", "cd".repeat(32)), "fr-CA,fr;q=0.9");
        assert_eq!(bad.status, 404);
        assert!(bad.text.contains("<html lang=\"fr\">"), "{}", bad.text);
        assert!(
            bad.text.contains("Ce lien n’est pas valide"),
            "{}",
            bad.text
        );
        let bad = get_as(web, "/s/nope/unsubscribe/1", "de");
        assert_eq!(bad.status, 404);
        assert!(
            bad.text.contains("Dieser Link ist ungültig"),
            "{}",
            bad.text
        );
    });
}

#[test]
fn unsubscribe_its_undo_and_one_click_answer_in_the_readers_language() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        speaks(&mut c, "asha", "de-AT");
        let code = code(&mut c, w.asha);
        let path = format!("/s/{code}/unsubscribe/{}", w.asha_daily);
        let a = web.get(&path, None);
        assert_eq!(a.status, 200);
        for want in [
            "<html lang=\"de\">",
            "<h1>Abbestellen?</h1>",
            "<p>Damit endet:</p>",
            "Täglich um 09:00 · per E-Mail",
            ">Alle Ihre Übersichten verwalten</a>",
        ] {
            assert!(a.text.contains(want), "{want:?} in {}", a.text);
        }
        no_keys_nor_english(&a, &["Unsubscribe?", "This stops"]);
        let t = csrf(&a.text);
        let done = post_form(web, &path, &[("csrf", &t)]);
        assert!(done.text.contains("<h1>Abbestellt</h1>"), "{}", done.text);
        assert!(done.text.contains(">Rückgängig</button>"), "{}", done.text);
        let undone = post_form(web, &format!("{path}/undo"), &[("csrf", &t)]);
        assert!(
            undone.text.contains("<h1>Wieder abonniert</h1>"),
            "{}",
            undone.text
        );
        let one = common::pages::post_raw(
            web,
            &path,
            "application/x-www-form-urlencoded",
            "List-Unsubscribe=One-Click".into(),
        );
        assert_eq!(one.status, 200);
        assert!(one.text.contains("Sie haben abbestellt."), "{}", one.text);
    });
}

/// The whole digest behind a digest's signed link is in the recipient's
/// language.
#[test]
fn the_whole_digest_page_is_in_the_recipients_language() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        speaks(&mut c, "asha", "fr-FR");
        // asha's 09:00 in Madrid is 08:00Z: her digest of the 23rd.
        common::pages::ops_adds_then_tick(&mut c, &w.cal, 77, "Standup", "2026-11-23T08:00:00Z");
        web.clock.set(at("2026-11-23T09:00:00Z"));
        let key = digestd::digest::link::LinkKey::load(&mut c).unwrap();
        let url = key.url("", w.asha_daily, "2026-11-23");
        let a = web.get(&url, None);
        assert_eq!(a.status, 200, "{url}: {}", a.text);
        for want in [
            "<html lang=\"fr\">",
            "<h1>1 modification dans Calendar depuis",
            "<strong>Standup</strong>",
            "1 élément. Heures indiquées en Europe/Madrid.",
        ] {
            assert!(a.text.contains(want), "{want:?} in {}", a.text);
        }
        assert!(!a.text.contains("Times are shown"), "{}", a.text);
    });
}
