//! The pages in German in the browser, from a browser that asks for
//! German (`intl.accept_languages`): asha (de-DE) opens the manage link of
//! her German digest and reads her page in German, `<html lang="de">`,
//! and saves a setting; a visitor signs up on the German form, confirms
//! on the German confirm page (the verification message named its
//! button), and is stored with the browser's `de-DE`. The pages are saved
//! as `*-de.png` for `docs/pages.md`. A zone the list does not offer (as a
//! hand-made form sends it) is refused in German, nothing written.

use serde_json::json;

use digestd::parties::{self, UserChanges};

use super::common::at;
use super::common::browser::{Browser, Options};
use super::common::pages::{code, snapshot};
use super::common::web::Web;
use super::{edit, in_browser, link_after, PostOffice};

const VISITOR: &str = "lena@example.de";

/// The subject and text part of a message the `dir` transport wrote.
fn subject_and_text(raw: &[u8]) -> (String, String, String) {
    let m = mail_parser::MessageParser::default()
        .parse(raw)
        .expect("a message");
    let to = m.to().and_then(|a| a.first()).and_then(|a| a.address());
    (
        to.unwrap_or_default().to_string(),
        m.subject().unwrap_or_default().to_string(),
        m.body_text(0).expect("a text part").to_string(),
    )
}

/// asha, reading German (`de-DE`).
fn german_asha(c: &mut digestd::db::DbConn) -> super::Asha {
    let a = super::asha(c);
    let german = UserChanges {
        locale: Some("de-DE".into()),
        ..Default::default()
    };
    digestd::manage::update_user(c, "asha", &german).unwrap();
    a
}

fn in_german(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = german_asha(&mut c);
    digestd::items::set_public(&mut c, &a.rota, true).unwrap();
    let mut po = PostOffice::new(web);
    edit(&mut c, &a, 1, "2026-11-22T10:00:00Z");
    // 09:00 in Madrid is 08:00Z: her German digest, with its links.
    let mails = po.run_raw(&mut c, "2026-11-23T08:00:00Z");
    assert_eq!(mails.len(), 1);
    let (_, subject, text) = subject_and_text(&mails[0]);
    assert_eq!(subject, "Tägliche Übersicht: Rota");
    let manage = link_after(&text, "Abonnements verwalten:").expect("a manage link");

    web.clock.set(at("2026-11-23T08:05:00Z"));
    b.open(&manage);
    assert_eq!(b.title(), "Ihre Übersichten · digestd");
    assert_eq!(
        b.execute("return document.documentElement.lang"),
        json!("de")
    );
    let t = b.text();
    for want in [
        "Ihre Übersichten, asha",
        "Zeiten in Europe/Madrid (CET), im 24-Stunden-Format.",
        "Rota: Änderungen",
        "Täglich um 09:00 · per E-Mail",
        "Wochen beginnen am (derzeit Montag)",
        "Alle Übersichten stoppen",
    ] {
        assert!(t.contains(want), "{want:?} in {t}");
    }
    assert!(
        !t.contains("Your digests") && !t.contains("Daily at"),
        "{t}"
    );
    b.shot("manage-de");
    b.choose("#week_start", "sun");
    b.press("form input[name=action][value=prefs] ~ p button");
    let t = b.text();
    assert!(t.contains("Gespeichert."), "{t}");
    assert!(t.contains("Wochen beginnen am (derzeit Sonntag)"), "{t}");

    // The sign-up form in the language the browser asks for.
    b.open(&web.url("/subscribe"));
    assert_eq!(b.title(), "Abonnieren · digestd");
    assert_eq!(
        b.execute("return document.documentElement.lang"),
        json!("de")
    );
    let t = b.text();
    assert!(
        t.contains("Übersichten abonnieren") && t.contains("Ihre Zeitzone"),
        "{t}"
    );
    let rota = format!("input[name=collection][value='{}']", a.rota);
    b.fill("#email", VISITOR);
    b.click(&rota);
    b.choose("#frequency", "daily");
    b.choose("#hour", "9");
    b.shot("signup-de");
    b.press("form button[type=submit]");
    assert_eq!(b.text_of("h1"), "Sehen Sie in Ihr Postfach");

    // The German verification message names the German button.
    let mails = po.run_raw(&mut c, "2026-11-23T08:10:00Z");
    let (to, subject, text) = subject_and_text(mails.last().expect("a message"));
    assert_eq!(to, VISITOR);
    assert_eq!(subject, "Bitte bestätigen Sie Ihr Abonnement");
    assert!(text.contains("klicken Sie auf „Bestätigen“:"), "{text}");
    let start = format!("{}/subscribe/confirm/", web.base);
    let link = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no link in {text}"));
    b.open(link);
    assert_eq!(b.text_of("h1"), "Abonnement bestätigen");
    assert_eq!(b.text_of("form button[type=submit]"), "Bestätigen");
    b.shot("signup-confirm-de");
    b.press("form button[type=submit]");
    assert_eq!(b.text_of("h1"), "Abonniert");
    let lena = parties::list_users(&mut c)
        .unwrap()
        .into_iter()
        .find(|u| u.email.as_deref() == Some(VISITOR))
        .expect("the new subscriber");
    assert_eq!(lena.locale, "de-DE");
}

#[test]
fn the_pages_in_german_in_a_browser() {
    in_browser(
        Options {
            languages: Some("de-DE,de"),
            ..Options::default()
        },
        in_german,
    );
}

/// asha (de-DE) sends a zone her page's list does not have (a script adds
/// it to the list, as a hand-made form would send it): the page again, the
/// zone's own check said in German, nothing written.
fn a_bad_zone_in_german(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = german_asha(&mut c);
    b.open(&web.url(&format!("/s/{}", code(&mut c, a.party))));
    assert_eq!(b.title(), "Ihre Übersichten · digestd");
    let chosen = b.execute(
        "var s = document.getElementById('timezone'); var o = document.createElement('option'); \
         o.value = 'Europe/Berln'; o.text = 'Europe/Berln'; s.appendChild(o); s.value = 'Europe/Berln'; \
         return s.value;",
    );
    assert_eq!(chosen, json!("Europe/Berln"));
    let before = snapshot(&mut c);
    b.press("form input[name=action][value=prefs] ~ p button");
    assert_eq!(
        b.text_of("p.error"),
        "„Europe/Berln“ ist keine bekannte IANA-Zeitzone – meinten Sie Europe/Berlin?"
    );
    assert_eq!(
        b.execute("return document.documentElement.lang"),
        json!("de")
    );
    b.shot("manage-refused-de");
    assert!(!b.text().contains("unknown IANA timezone"));
    assert_eq!(snapshot(&mut c), before);
    let user = parties::get_user(&mut c, a.party).unwrap();
    assert_eq!(user.timezone, "Europe/Madrid");
}

#[test]
fn a_bad_zone_is_refused_in_german_in_a_browser() {
    in_browser(Options::default(), a_bad_zone_in_german);
}
