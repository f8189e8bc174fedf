//! Sign-up in the visitor's language, through the real server on each
//! back end: with `Accept-Language: fr` the form, the "check your mail"
//! answer, the verification message and the confirm page (opened from a
//! browser that asks for English: the message named its button) are
//! French, and the confirmed person is stored with `fr`, so their first
//! digest is French. `?lang=de` wins over the browser and is carried into
//! the form's action; a known address keeps its own locale. Hostile `Accept-Language` headers get the English
//! page and store nothing of theirs. Expected texts are written out by
//! hand from the catalogues.

use crate::common;

use common::at;
use common::pages::{csrf, get_as, snapshot, NOW};
use common::signup::{daily, setup};
use common::web::{Answer, Web};
use common::TestDb;
use diesel::prelude::*;
use digestd::db::schema::{nt_messages, nt_requests, signups};
use digestd::db::DbConn;

/// Runs `f` on each back end with room for more sign-ups from one client
/// than the default 5 an hour (these tests sign up a dozen from one).
fn each_backend(f: impl Fn(&Web)) {
    let tune = |cfg: &mut digestd::config::Config| cfg.signup.per_client_per_hour = 100;
    f(&Web::start_with(TestDb::sqlite(), at(NOW), tune));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start_with(pg, at(NOW), tune));
    }
}

fn post_as(web: &Web, path: &str, accept_language: &str, fields: &[(&str, &str)]) -> Answer {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    web.send(|c| {
        c.post(web.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept-language", accept_language)
            .body(body)
    })
}

/// Signs `email` up to `cal` daily at 09:00 from a browser asking for
/// `accept_language`, through the form at `form` (`/subscribe?lang=…`).
fn sign_up_as(web: &Web, form: &str, accept_language: &str, email: &str, cal: &str) -> Answer {
    let page = get_as(web, form, accept_language);
    assert_eq!(page.status, 200, "{}", page.text);
    let token = csrf(&page.text);
    let mut fields = vec![("csrf", token.as_str())];
    fields.extend(daily(email, cal));
    post_as(web, form, accept_language, &fields)
}

/// The newest verification message's subject and text (before the queue
/// sends it and scrubs the link).
fn newest_message(c: &mut DbConn) -> (String, String) {
    nt_requests::table
        .inner_join(nt_messages::table)
        .filter(nt_requests::subscription_id.is_null())
        .order(nt_requests::request_id.desc())
        .select((nt_requests::subject, nt_messages::message))
        .first(c)
        .unwrap()
}

fn token_in(text: &str) -> String {
    let mark = "/subscribe/confirm/";
    let i = text.find(mark).unwrap_or_else(|| panic!("{text}")) + mark.len();
    text[i..i + 64].to_string()
}

fn locale_of(c: &mut DbConn, email: &str) -> String {
    digestd::parties::list_users(c)
        .unwrap()
        .into_iter()
        .find(|u| u.email.as_deref() == Some(email))
        .map(|u| u.locale)
        .expect("the confirmed person")
}

#[test]
fn a_french_browser_signs_up_in_french_and_the_person_keeps_it() {
    each_backend(|web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let form = get_as(web, "/subscribe", "fr");
        for want in [
            "<html lang=\"fr\">",
            "<h1>S’abonner aux résumés</h1>",
            "<option value=\"daily\" selected>Tous les jours</option>",
            "<option value=\"mon\" selected>lundi</option>",
            "<strong lang=\"fr\">Français</strong>",
            "<a href=\"?lang=de\" lang=\"de\" hreflang=\"de\">Deutsch</a>",
        ] {
            assert!(form.text.contains(want), "{want:?} in {}", form.text);
        }
        assert!(!form.text.contains("Subscribe to digests"), "{}", form.text);
        let sent = sign_up_as(web, "/subscribe", "fr", "fleur@example.net", &cal);
        assert_eq!(sent.status, 200, "{}", sent.text);
        assert!(
            sent.text.contains("Consultez votre messagerie"),
            "{}",
            sent.text
        );
        // The message names the confirm page's button in its own words.
        assert!(
            sent.text.contains("cliquez sur « Confirmer »"),
            "{}",
            sent.text
        );
        let (subject, text) = newest_message(&mut c);
        assert_eq!(subject, "Confirmez votre abonnement aux résumés");
        assert!(
            text.contains("ouvrez ce lien et cliquez sur « Confirmer » :"),
            "{text}"
        );
        let wish: String = signups::table
            .select(signups::wish)
            .order(signups::id.desc())
            .first(&mut c)
            .unwrap();
        assert!(wish.contains("\"locale\":\"fr\""), "{wish}");
        // Opened from a mail program that asks for English: the page is
        // the message's language, its button the one the message named.
        let path = format!("/subscribe/confirm/{}", token_in(&text));
        let before = snapshot(&mut c);
        let g = get_as(web, &path, "en-US");
        assert_eq!(snapshot(&mut c), before, "the GET wrote something");
        for want in [
            "<html lang=\"fr\">",
            "<h1>Confirmez votre abonnement</h1>",
            "Tous les jours à 09:00 (Europe/Berlin)",
            ">Confirmer</button>",
        ] {
            assert!(g.text.contains(want), "{want:?} in {}", g.text);
        }
        let done = post_as(web, &path, "en-US", &[("csrf", &csrf(&g.text))]);
        assert_eq!(done.status, 200, "{}", done.text);
        assert!(done.text.contains("<h1>Abonné</h1>"), "{}", done.text);
        assert_eq!(locale_of(&mut c, "fleur@example.net"), "fr");
        // So the first digest is French: something changes, 09:00 Berlin.
        common::pages::ops_adds_then_tick(&mut c, &cal, 4343, "Fête", "2026-11-23T08:00:00Z");
        let subjects: Vec<String> = nt_requests::table
            .filter(nt_requests::subscription_id.is_not_null())
            .select(nt_requests::subject)
            .load(&mut c)
            .unwrap();
        assert!(
            subjects.contains(&"Résumé quotidien : Calendar".to_string()),
            "{subjects:?}"
        );
    });
}

#[test]
fn lang_in_the_query_wins_over_the_browser_and_is_stored() {
    each_backend(|web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let form = get_as(web, "/subscribe?lang=de", "fr-CA,fr;q=0.9");
        assert!(form.text.contains("<html lang=\"de\">"), "{}", form.text);
        assert!(
            form.text.contains("action=\"/subscribe?lang=de\""),
            "{}",
            form.text
        );
        let sent = sign_up_as(web, "/subscribe?lang=de", "fr-CA", "dora@example.net", &cal);
        assert!(
            sent.text.contains("Sehen Sie in Ihr Postfach"),
            "{}",
            sent.text
        );
        let (subject, text) = newest_message(&mut c);
        assert_eq!(subject, "Bitte bestätigen Sie Ihr Abonnement");
        let path = format!("/subscribe/confirm/{}", token_in(&text));
        let g = web.get(&path, None);
        assert!(g.text.contains(">Bestätigen</button>"), "{}", g.text);
        post_as(web, &path, "", &[("csrf", &csrf(&g.text))]);
        assert_eq!(locale_of(&mut c, "dora@example.net"), "de");
        // The browser's own regional tag is stored as it asked.
        let sent = sign_up_as(web, "/subscribe", "pt-BR,pt;q=0.8", "ana@example.net", &cal);
        assert!(sent.text.contains("Confira seu e-mail"), "{}", sent.text);
        let (_, text) = newest_message(&mut c);
        let path = format!("/subscribe/confirm/{}", token_in(&text));
        let g = web.get(&path, None);
        post_as(web, &path, "", &[("csrf", &csrf(&g.text))]);
        assert_eq!(locale_of(&mut c, "ana@example.net"), "pt-BR");
        // A known address keeps its own locale, as it keeps its zone.
        let sent = sign_up_as(web, "/subscribe", "ja", "asha@example.com", &cal);
        assert!(
            sent.text.contains("メールをご確認ください"),
            "{}",
            sent.text
        );
        let (_, text) = newest_message(&mut c);
        let path = format!("/subscribe/confirm/{}", token_in(&text));
        let g = web.get(&path, None);
        assert!(g.text.contains(">確認する</button>"), "{}", g.text);
        post_as(web, &path, "", &[("csrf", &csrf(&g.text))]);
        assert_eq!(locale_of(&mut c, "asha@example.com"), "en-GB");
    });
}

#[test]
fn hostile_accept_language_gets_the_english_page_and_stores_nothing_of_it() {
    each_backend(|web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let long = format!("fr,{}", "x-y;q=0.1,".repeat(80));
        let hostile = [
            "*",
            "fr;q=2",
            "fr;q=NaN",
            "fr;q=inf",
            "fr;q=-1",
            "<script>alert(1)</script>",
            "fr\"><script>",
            "../../etc/passwd",
            ";;;,,,",
            long.as_str(),
        ];
        for (i, h) in hostile.iter().enumerate() {
            let a = get_as(web, "/subscribe", h);
            assert_eq!(a.status, 200, "{h:?}");
            assert!(a.text.contains("<html lang=\"en\">"), "{h:?}: {}", a.text);
            assert!(!a.text.contains("<script>alert"), "{h:?}");
            let email = format!("h{i}@example.net");
            let sent = sign_up_as(web, "/subscribe", h, &email, &cal);
            assert_eq!(sent.status, 200, "{h:?}: {}", sent.text);
            assert!(sent.text.contains("Check your mail"), "{h:?}");
            let (subject, text) = newest_message(&mut c);
            assert_eq!(subject, digestd::signup::SUBJECT, "{h:?}");
            let path = format!("/subscribe/confirm/{}", token_in(&text));
            let g = web.get(&path, None);
            post_as(web, &path, h, &[("csrf", &csrf(&g.text))]);
            // No locale of its own: the default.
            assert_eq!(locale_of(&mut c, &email), "en-US", "{h:?}");
        }
        // Header bytes that are not text: the English page too.
        let a = web.send(|cl| {
            cl.get(web.url("/subscribe")).header(
                "accept-language",
                reqwest::header::HeaderValue::from_bytes(b"fr\xff\xfe").unwrap(),
            )
        });
        assert_eq!(a.status, 200);
        assert!(a.text.contains("<html lang=\"en\">"), "{}", a.text);
    });
}

#[test]
fn a_malformed_address_is_refused_in_the_visitors_language() {
    each_backend(|web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let before = snapshot(&mut c);
        for (lang, email, want) in [
            (
                "fr",
                "fleur.example.net",
                "adresse e-mail « fleur.example.net » invalide : il manque le « @ »",
            ),
            (
                "de-DE",
                "jörg@example.de",
                "ungültige E-Mail-Adresse „jörg@example.de“: Adressen mit Umlauten oder anderen Zeichen außerhalb von ASCII werden nicht unterstützt",
            ),
            (
                "es",
                "<script>@example",
                "dirección de correo no válida «&#60;script&#62;@example»: la parte antes de la «@» tiene un carácter que aquí no se admite",
            ),
            (
                "ja",
                "a@b.example\u{202E}",
                "メールアドレス「a@b.example\\u{202e}」が正しくありません。制御文字が含まれています",
            ),
        ] {
            let a = sign_up_as(web, "/subscribe", lang, email, &cal);
            assert_eq!(a.status, 422, "{email:?}: {}", a.text);
            assert!(a.text.contains(want), "{want:?} in {}", a.text);
            assert!(!a.text.contains("invalid email address"), "{}", a.text);
        }
        assert_eq!(snapshot(&mut c), before);
    });
}
