//! The operator's pages in the operator's language (`[i18n]
//! operator_locale = "de"`), through the real server on each back end:
//! the login form, the status page, the subscribers (each subscription in
//! German words on its subscriber's own clock), a refusal and the 403 of
//! a stale form, all German; the browser's `Accept-Language` plays no
//! part. The names the queue stores (statuses, kinds, outcomes, channels)
//! in German with the stored word kept in links and forms; refused filters
//! and forms said in German, hostile values escaped, nothing written, the
//! JSON API's line still English; the week grid's drawing and table in
//! German. Expected texts are written out by hand from the catalogues.

use crate::common;
use crate::http_admin::{form, get, sessions, signed_in};
use crate::http_admin_pages::requests;

use digestd::access::Scope;
use digestd::parties::{self, Channel, ContactChange};

use common::pages::{csrf, get_as, snapshot, world, NOW};
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
            "<td>E-Mail</td><td>bo@example.org</td><td>nein</td><td>aktiv</td>".to_string(),
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

/// `text` holds none of `words`.
fn lacks(text: &str, words: &[&str]) {
    for w in words {
        assert!(!text.contains(w), "{w:?} in {text}");
    }
}

#[test]
fn statuses_kinds_outcomes_and_channels_are_named_in_the_operators_language() {
    each_backend_in("de", |web| {
        let mut c = web.db.conn();
        world(&mut c);
        let (_, failed, busy) = requests(&mut c);
        parties::change_contact(
            &mut c,
            at(NOW),
            "asha",
            Channel::Email,
            &ContactChange::Disable,
        )
        .unwrap();
        let s = signed_in(web);
        // The queue and the events by status: the link keeps the stored word.
        let t = get(web, "/admin", &s).text;
        holds(
            &t,
            &[
                "<a href=\"/admin/requests?status=pending\">wartend</a>",
                "<a href=\"/admin/requests?status=partial_failure\">teilweise fehlgeschlagen</a>",
                "<tr id=\"events-pending\"><td>wartend</td>",
                "<tr id=\"events-skipped\"><td>übersprungen</td>",
            ],
        );
        lacks(&t, &[">pending<", ">skipped<", ">partial_failure<"]);
        // The events in the order of their life, whatever their names.
        let at = |id: &str| t.find(&format!("<tr id=\"events-{id}\">")).unwrap();
        let order = ["pending", "sent", "failed", "skipped"].map(at);
        assert!(order.is_sorted(), "{order:?}");
        // The filter's choices say the status; their values stay stored.
        let t = get(web, "/admin/requests?status=failed", &s).text;
        holds(
            &t,
            &[
                "<option value=\"failed\" selected>fehlgeschlagen</option>",
                "<option value=\"cancelled\">abgebrochen</option>",
                "<td>fehlgeschlagen</td><td>Benachrichtigung</td>",
            ],
        );
        lacks(&t, &[">failed<", ">notification<"]);
        // One request: its status, kind, each recipient's channel and
        // every attempt's outcome.
        let t = get(web, &format!("/admin/requests/{}", failed.0), &s).text;
        holds(
            &t,
            &[
                "<span id=\"status\">fehlgeschlagen</span>",
                "<p>Benachrichtigung · to gone</p>",
                "<td>gone</td><td>E-Mail</td><td>gone@example.net</td>",
                "<td>E-Mail</td><td>gone@example.net</td><td>dauerhaft abgelehnt</td>",
            ],
        );
        lacks(&t, &[">email<", ">permanent<", ">failed<"]);
        let t = get(web, &format!("/admin/requests/{}", busy.0), &s).text;
        holds(
            &t,
            &[
                "<span id=\"status\">wird gesendet</span>",
                "<td>vorübergehend abgelehnt</td>",
            ],
        );
        // A subscriber's addresses: the channel said, the form's value stored.
        let t = get(web, "/admin/subscribers", &s).text;
        holds(
            &t,
            &[
                "<tr class=\"contact\"><td>E-Mail</td><td>asha@example.com</td>",
                "<input type=\"hidden\" name=\"channel\" value=\"email\">",
                "<td>SMS</td><td>+34600111222</td>",
            ],
        );
        lacks(&t, &["<td>email</td>", "<td>sms</td>"]);
    });
}

#[test]
fn refused_filters_are_said_in_the_operators_language_escaped_and_write_nothing() {
    each_backend_in("de", |web| {
        let mut c = web.db.conn();
        world(&mut c);
        let s = signed_in(web);
        let (before, sessions_before) = (snapshot(&mut c), sessions(&mut c));
        let long = "a".repeat(10_000);
        let q_long = format!("/admin/requests?recipient={long}");
        let q_key = format!("/admin/requests?{long}=1");
        let cut = format!("Das Feld „{}…“ ist länger als 200 Zeichen.", "a".repeat(64));
        for (q, want) in [
            ("/admin/requests?status=bogus", "„bogus“ ist kein Status: Wählen Sie einen aus der Liste."),
            ("/admin/requests?status=%3Cscript%3Ex", "„&#60;script&#62;x“ ist kein Status"),
            ("/admin/requests?status=a%E2%80%AEb", "„a\\u{202e}b“ ist kein Status"),
            ("/admin/requests?status=pending%0D%0AX:%20y", "Das Feld „status“ enthält ein Steuerzeichen; das ist nicht erlaubt."),
            (q_long.as_str(), "Das Feld „recipient“ ist länger als 200 Zeichen."),
            (q_key.as_str(), cut.as_str()),
            ("/admin/requests?recipient=nobody", "Es gibt keinen Benutzer und keine Gruppe namens „nobody“."),
            ("/admin/requests?sender=%3Cb%3E", "„&#60;b&#62;“ ist kein gültiger Name: Verwenden Sie 1 bis 64 Buchstaben"),
            ("/admin/requests?before=abc", "„abc“ ist keine Auftrags-ID."),
            ("/admin/subscribers?disabled=yes", "„yes“ ist kein zulässiger Wert für „Nur mit deaktivierter Adresse“: Verwenden Sie 1 oder nichts."),
            ("/admin/grid?time=bogus", "„bogus“ ist keine Zeitangabe des Rasters: Wählen Sie Serverzeit (UTC) oder Ortszeit jedes Abonnenten."),
            ("/admin/grid?week=next%20week", "„next week“ ist kein Zeitpunkt: Verwenden Sie RFC 3339"),
            ("/admin/grid?user=nobody", "Es gibt keinen Benutzer und keine Gruppe namens „nobody“."),
        ] {
            let a = get(web, q, &s);
            assert_eq!(a.status, 400, "{}: {}", &q[..q.len().min(60)], a.text);
            holds(&a.text, &["<html lang=\"de\">", "<p class=\"error\" role=\"alert\">", want]);
            lacks(&a.text, &["is not one of", "control characters", "no user or group", "<script>", "\u{202e}", "X: y\r", &long[..201]]);
        }
        assert_eq!(snapshot(&mut c), before);
        assert_eq!(sessions(&mut c), sessions_before);
    });
}

#[test]
fn refused_forms_are_said_in_the_operators_language_and_change_nothing() {
    each_backend_in("de", |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let (_, failed, _) = requests(&mut c);
        let s = signed_in(web);
        let token = csrf(&get(web, "/admin/subscribers", &s).text);
        let (before, sessions_before) = (snapshot(&mut c), sessions(&mut c));
        let long = "b".repeat(10_000);
        let cancel = format!("/admin/requests/{}/cancel", failed.0);
        let optin = format!("/admin/subscriptions/{}/optin", w.asha_daily);
        let enable = "/admin/subscribers/enable";
        for (path, fields, status, want) in [
            (enable, vec![("party", "asha"), ("channel", "fax")], 400, "„fax“ ist kein Kanal."),
            (enable, vec![("party", "asha\r\n"), ("channel", "email")], 400, "Das Feld „party“ enthält ein Steuerzeichen"),
            (enable, vec![("party", long.as_str()), ("channel", "email")], 400, "Das Feld „party“ ist länger als 200 Zeichen."),
            (enable, vec![("party", "<script>"), ("channel", "email")], 400, "„&#60;script&#62;“ ist kein gültiger Name"),
            (enable, vec![("party", "nobody"), ("channel", "email")], 404, "Es gibt keinen Benutzer und keine Gruppe namens „nobody“."),
            (enable, vec![("party", "bo"), ("channel", "matrix")], 404, "bo hat keine Adresse für Matrix."),
            (cancel.as_str(), vec![], 409, "Dieser Auftrag ist bereits abgeschlossen (fehlgeschlagen): Nur wartende oder laufende Aufträge können abgebrochen werden."),
            ("/admin/requests/999999/cancel", vec![], 404, "Diesen Auftrag gibt es nicht."),
            (optin.as_str(), vec![("member", "nobody")], 404, "nobody hat sich von diesem Abonnement nicht abgemeldet."),
        ] {
            let mut f = vec![("csrf", token.as_str())];
            f.extend(fields);
            let a = form(web, path, Some(&s), &f);
            assert_eq!(a.status, status, "{path}: {}", a.text);
            holds(&a.text, &["<html lang=\"de\">", "<h1>Nicht ausgeführt</h1>", want, ">Zurück</a>"]);
            lacks(&a.text, &["<script>", "\r\n", &long[..201], "not a channel", "no user or group", "already failed"]);
        }
        // A body that is no form: refused in German before anything is read.
        let a = web.send(|cl| {
            cl.post(web.url(enable))
                .header("content-type", "application/json")
                .header("cookie", format!("digestd_admin={s}"))
                .body("{}")
        });
        assert_eq!(a.status, 415, "{}", a.text);
        holds(&a.text, &["<html lang=\"de\">"]);
        // A form larger than `[http] max_form_bytes` (16 KiB): refused
        // unread, in German whatever the browser asks for.
        let big = format!("csrf={token}&member={}", "c".repeat(20_000));
        let a = web.send(|cl| {
            cl.post(web.url(&optin))
                .header("content-type", "application/x-www-form-urlencoded")
                .header("accept-language", "en")
                .header("cookie", format!("digestd_admin={s}"))
                .body(big)
        });
        assert_eq!(a.status, 413, "{}", a.text);
        holds(
            &a.text,
            &[
                "<html lang=\"de\">",
                "Das Formular ist größer, als dieser Server annimmt.",
            ],
        );
        assert_eq!(snapshot(&mut c), before);
        assert_eq!(sessions(&mut c), sessions_before);
        // The JSON API keeps the library's English line.
        let admin = web.token("api", Scope::Admin);
        let a = web.post(
            &format!("/api/v1/requests/{}/cancel", failed.0),
            Some(&admin),
            "",
        );
        assert_eq!(a.status, 409, "{}", a.text);
        holds(
            &a.text,
            &["is already failed; only pending or sending requests can be cancelled"],
        );
    });
}

#[test]
fn the_week_grid_is_drawn_in_the_operators_language() {
    each_backend_in("de", |web| {
        let mut c = web.db.conn();
        world(&mut c);
        let s = signed_in(web);
        let a = get(web, "/admin/grid?week=2026-11-20T00:00:00Z", &s);
        assert_eq!(a.status, 200, "{}", a.text);
        let t = &a.text;
        holds(
            t,
            &[
                // The drawing: title, weekday rows, axes, legend, a cell.
                "<title>Übersichten in der Woche vom 2026-11-16 (alle Benutzer)</title>",
                "Übersichten pro Stunde der Woche, Serverzeit (UTC)</text>",
                ">Mo.</text>",
                ">Mi.</text>",
                ">So.</text>",
                ">Stunde des Tages (Serverzeit (UTC))</text>",
                ">Tag</text>",
                ">Übersichten pro Stunde:</text>",
                "<title>Mo. 08:00 Serverzeit (UTC): 1 Übersicht, 0 leere Läufe</title>",
                "<title>Di. 03:00 Serverzeit (UTC): 0 Übersichten, 0 leere Läufe</title>",
                "0 leere Läufe (gelaufen, nichts zu senden) nicht mitgezählt",
                // The table: its heading, header, weekday rows, peak.
                "<pre>Übersichten in der Woche vom 2026-11-16 (alle Benutzer), Serverzeit (UTC)\n",
                "   gesamt\nMo.  ",
                "\nSo.  ",
                "Spitze: Mo. 07:00 mit 1 von 22 Übersichten\n</pre>",
            ],
        );
        lacks(
            t,
            &[
                ">Mon<",
                "Mon ",
                "hour of the day",
                "digests per hour",
                "peak:",
                "empty runs",
                "total\n",
                "all users",
            ],
        );
        let a = get(
            web,
            "/admin/grid?week=2026-11-20T00:00:00Z&time=local&user=bo",
            &s,
        );
        holds(
            &a.text,
            &[
                "(Benutzer bo)",
                ">Stunde des Tages (Ortszeit)</text>",
                "<title>Mo. 07:00 Ortszeit: 1 Übersicht, 0 leere Läufe</title>",
            ],
        );
    });
}
