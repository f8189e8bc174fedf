//! The operator's pages in the operator's language (`[i18n]
//! operator_locale = "de"`), through the real server on each back end:
//! the login form, the status page, the subscribers (each subscription in
//! German words on its subscriber's own clock), a refusal and the 403 of
//! a stale form, all German; the browser's `Accept-Language` plays no
//! part. Expected texts are written out by hand from the catalogues.

use crate::common;
use crate::http_admin::{form, get, signed_in};

use common::pages::{get_as, world, NOW};
use common::web::Web;
use common::{at, TestDb};

/// Runs `f` on each back end with the operator's pages in `locale`.
fn each_backend_in(locale: &'static str, f: impl Fn(&Web)) {
    let tune = move |cfg: &mut digestd::config::Config| cfg.i18n.operator_locale = locale.into();
    f(&Web::start_with(TestDb::sqlite(), at(NOW), tune));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start_with(pg, at(NOW), tune));
    }
}

/// `text` holds each of `wants`.
fn holds<S: AsRef<str>>(text: &str, wants: &[S]) {
    for want in wants {
        let want = want.as_ref();
        assert!(text.contains(want), "{want:?} in {text}");
    }
}

#[test]
fn the_operators_pages_are_in_the_operators_language() {
    each_backend_in("de-DE", |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        // The login form, whatever the browser asks for.
        let a = get_as(web, "/admin/login", "ja,en;q=0.5");
        holds(
            &a.text,
            &[
                "<html lang=\"de\">",
                "<title>Anmeldung für Betreiber · digestd-Verwaltung</title>",
                "<label for=\"token\">Admin-Token</label>",
                "Ein API-Token mit dem Bereich admin (<code>digestd token add NAME --scope admin</code>).",
                ">Anmelden</button>",
            ],
        );
        let s = signed_in(web);
        let t = get(web, "/admin", &s).text;
        holds(
            &t,
            &[
                "<html lang=\"de\">",
                "<title>Status · digestd-Verwaltung</title>",
                "<h1>Status – Stand 2026-11-22 00:30:00 UTC</h1>",
                "<h2>Warteschlange</h2>",
                "Ältester wartender Auftrag: <span id=\"oldest\">keiner wartet</span>",
                "<p>Noch kein Tick hat einen Lauf verzeichnet.</p>",
                "stehen unter <code>/metrics</code> (<code>digestd_tick_duration_seconds</code>).",
                "<code>digestd events list</code> zeigt sie an;",
                ">Abmelden</button>",
                "<footer>digestd · Seiten des Betreibers</footer>",
            ],
        );
        for english in [
            "Queue",
            "Last ticks",
            "Oldest pending",
            "Log out",
            "operator pages",
        ] {
            assert!(!t.contains(english), "{english:?} in {t}");
        }
        // Each subscription in German words, on its subscriber's clock:
        // asha's 24-hour (en-GB), bo's 12-hour (en-US).
        let t = get(web, "/admin/subscribers", &s).text;
        holds(
            &t,
            &[
            format!(
                "#{} <strong>Calendar</strong>: Änderungen, Täglich um 09:00 (Ortszeit des Abonnenten)",
                w.asha_daily
            ),
            format!(
                "#{} <strong>Calendar</strong>: Änderungen, Täglich um 7:00 AM (Ortszeit des Abonnenten)",
                w.bo_daily
            ),
            "<th>bestätigt</th>".to_string(),
            "<td>email</td><td>bo@example.org</td><td>nein</td><td>aktiv</td>".to_string(),
            ],
        );
        assert!(!t.contains("their time") && !t.contains("Daily at"), "{t}");
        // A subscription's page, and a refusal with its way back.
        let t = get(web, &format!("/admin/subscriptions/{}", w.asha_daily), &s).text;
        assert!(
            t.contains(&format!("<h1>Abonnement {}</h1>", w.asha_daily)),
            "{t}"
        );
        assert!(t.contains("Täglich um 09:00 (Zeit von asha)"), "{t}");
        let a = get(web, "/admin/requests/999999", &s);
        assert_eq!(a.status, 404, "{}", a.text);
        assert!(a.text.contains("<h1>Nicht ausgeführt</h1>"), "{}", a.text);
        assert!(a.text.contains(">Zurück</a>"), "{}", a.text);
        // A stale form: the 403 page in German too.
        let a = form(web, "/admin/logout", Some(&s), &[("csrf", "x")]);
        assert_eq!(a.status, 403, "{}", a.text);
        assert!(a.text.contains("Formular abgelaufen"), "{}", a.text);
    });
}
