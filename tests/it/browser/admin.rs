//! The operator's pages in the browser: an admin token made by the library
//! call `digestd token add NAME --scope admin` makes; a wrong token and a
//! token of another scope are refused at `/admin/login` with no session
//! written; the right one logs in (the session cookie); `/admin` shows the
//! real tick's run and the queue; `/admin/requests` filtered to pending
//! finds the request posted through the queue; its page cancels it with
//! its form, and the database shows that request cancelled and nothing
//! else changed; then the subscribers and the grid, and log out.

use diesel::prelude::*;
use digestd::access::Scope;
use digestd::config::EmailConfig;
use digestd::db::schema::{admin_sessions, delivery_log, nt_messages, nt_queue, nt_requests};
use digestd::db::DbConn;
use digestd::deliver::queue;
use digestd::ids::RequestId;
use digestd::parties::{self, Channel, ContactChange, NewUser};

use super::common::at;
use super::common::browser::{Browser, Options};
use super::common::pages::snapshot;
use super::common::web::Web;
use super::{edit, in_browser, one_digest, PostOffice};

fn sessions(c: &mut DbConn) -> i64 {
    admin_sessions::table.count().get_result(c).unwrap()
}

/// Every request's status, and the rows of the tables a cancel could
/// touch besides it.
fn queue_state(c: &mut DbConn) -> (Vec<(i64, String)>, i64, i64, i64) {
    let reqs = nt_requests::table
        .select((nt_requests::request_id, nt_requests::status))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    let q: i64 = nt_queue::table.count().get_result(c).unwrap();
    let m: i64 = nt_messages::table.count().get_result(c).unwrap();
    let l: i64 = delivery_log::table.count().get_result(c).unwrap();
    (reqs, q, m, l)
}

/// Logs in at the login page (already open) with `token`.
fn log_in(b: &Browser, token: &str) {
    b.fill("#token", token);
    b.press("form button[type=submit]");
}

/// Whether the browser is on the login page, as the server's answer to a
/// page asked for without a session.
fn at_login(b: &Browser) -> bool {
    b.url().ends_with("/admin/login") && b.title() == "Operator login · digestd admin"
}

/// The request `pending` (its row `row` listed), cancelled with its page's
/// form: in the database that request is cancelled and nothing else
/// changed.
fn cancel_with_its_form(b: &Browser, c: &mut DbConn, pending: RequestId, row: &str) {
    b.press(&format!("{row} a"));
    assert_eq!(b.text_of("#status"), "pending");
    assert!(b.text().contains("Cancel this request"));
    b.shot("admin-request");
    let before = queue_state(c);
    let people = snapshot(c);
    b.press("form[action$='/cancel'] button");
    assert!(b.url().ends_with("?done=cancelled"), "{}", b.url());
    assert_eq!(b.text_of("#status"), "cancelled");
    assert!(b.text().contains("Cancelled."));
    assert!(!b.text().contains("Cancel this request"));
    // In the database: that request cancelled, nothing else changed.
    let mut want = before.clone();
    for r in want.0.iter_mut().filter(|r| r.0 == pending.0) {
        assert_eq!(r.1, "pending");
        r.1 = "cancelled".into();
    }
    assert_eq!(queue_state(c), want);
    let was = format!("({}, \"pending\")", pending.0);
    assert!(people.contains(&was), "{people}");
    assert_eq!(
        snapshot(c),
        people.replace(&was, &format!("({}, \"cancelled\")", pending.0))
    );
    assert_eq!(status(c, pending), "cancelled");
}

/// What the operator's pages show: asha's digest sent by a real tick and
/// queue run, bo's address disabled by bounces, and a notification posted
/// through the queue and not run yet (returned), at 09:30.
fn operators_world(web: &Web, c: &mut DbConn) -> RequestId {
    let a = super::asha(c);
    // bo's address bounced until it was disabled.
    let bo = NewUser {
        name: "bo".into(),
        timezone: "America/New_York".into(),
        email: Some("bo@example.org".into()),
        ..Default::default()
    };
    let t0 = at("2026-11-01T00:00:00Z");
    parties::create_user(c, t0, &bo).unwrap();
    parties::change_contact(c, t0, "bo", Channel::Email, &ContactChange::Disable).unwrap();
    // A real tick and queue run: asha's digest, delivered.
    let mut po = PostOffice::new(web);
    assert!(po.run(c, "2026-11-22T08:00:00Z").is_empty());
    edit(c, &a, 1, "2026-11-22T10:00:00Z");
    one_digest(&mut po, c, "2026-11-23T08:00:00Z", 1);
    // Then a notification posted through the queue, not run yet: pending.
    let pending = queue::post_request(
        c,
        &EmailConfig::default(),
        &queue::NewNotification {
            from: "ops".into(),
            to: "asha".into(),
            subject: "The rota meeting moves to Thursday".into(),
            message: "See the Rota.".into(),
            ..Default::default()
        },
        at("2026-11-23T09:00:00Z"),
    )
    .unwrap();
    web.clock.set(at("2026-11-23T09:30:00Z"));
    pending
}

fn operator(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let pending = operators_world(web, &mut c);
    // As `digestd token add ops --scope admin` (the same library call).
    let secret = web.token("ops", Scope::Admin);
    let reader = web.token("feeds", Scope::Read);

    // No session: the pages lead to the login.
    b.clear_cookies();
    b.open(&web.url("/admin"));
    assert!(at_login(b), "{}", b.url());
    // A wrong token and a token of another scope: refused, nothing written.
    for (bad, what) in [("not-a-token", "a wrong token"), (reader.as_str(), "read")] {
        log_in(b, bad);
        assert!(at_login(b), "{what}: {}", b.url());
        let t = b.text();
        assert!(t.contains("That is not a valid admin token"), "{what}: {t}");
        assert_eq!(sessions(&mut c), 0, "{what}");
        b.open(&web.url("/admin/requests"));
        assert!(at_login(b), "{what}: {}", b.url());
    }

    // The right token: the status page.
    log_in(b, &secret);
    assert!(b.url().ends_with("/admin"), "{}", b.url());
    assert_eq!(sessions(&mut c), 1);
    assert_eq!(b.text_of("h1"), "Status at 2026-11-23 09:30:00 UTC");
    assert_eq!(b.text_of("#status-pending td.num"), "1");
    let t = b.text();
    assert!(t.contains("2026-11-23 08:00:00 UTC"), "the tick's run: {t}");
    b.shot("admin");

    // Requests, then only the pending ones: the notification.
    b.press("nav a[href='/admin/requests']");
    assert_eq!(b.text_of("h1"), "Requests");
    let t = b.text();
    assert!(t.contains("The rota meeting moves to Thursday"), "{t}");
    assert!(t.contains("Daily digest: Rota"), "the digest: {t}");
    b.shot("admin-requests");
    b.choose("#status", "pending");
    b.press("form.filter button");
    let rows = b.source().matches("<tr class=\"request\"").count();
    assert_eq!(rows, 1, "{}", b.text());
    let row = format!("#request-{}", pending.0);
    assert!(b.text_of(&row).contains("pending"));

    cancel_with_its_form(b, &mut c, pending, &row);

    // The subscribers (bo's disabled address) and the week grid.
    b.press("nav a[href='/admin/subscribers']");
    assert_eq!(b.text_of("h1"), "Subscribers");
    assert!(b.text_of("#user-asha").contains("asha@example.com"));
    let bo = b.text_of("#user-bo");
    assert!(bo.contains("disabled") && bo.contains("Re-enable"), "{bo}");
    b.shot("admin-subscribers");
    b.press("nav a[href='/admin/grid']");
    assert!(b.source().contains("<svg"), "the heat map");
    b.shot("admin-grid");

    // Log out: the session ends; the pages lead to the login again.
    b.press("nav form button");
    assert!(at_login(b), "{}", b.url());
    b.open(&web.url("/admin"));
    assert!(at_login(b), "{}", b.url());
    assert_eq!(sessions(&mut c), 0);
}

fn status(c: &mut DbConn, id: RequestId) -> String {
    nt_requests::table
        .find(id.0)
        .select(nt_requests::status)
        .first(c)
        .unwrap()
}

#[test]
fn the_operator_logs_in_and_cancels_a_request_in_a_browser() {
    in_browser(Options::default(), operator);
}

/// The status page in the operator's language (`[i18n] operator_locale =
/// "de"`) whatever the browser asks for, saved as `admin-de.png`.
fn operator_in_german(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    operators_world(web, &mut c);
    let secret = web.token("ops", Scope::Admin);
    b.clear_cookies();
    b.open(&web.url("/admin/login"));
    log_in(b, &secret);
    assert!(b.url().ends_with("/admin"), "{}", b.url());
    assert_eq!(b.text_of("h1"), "Status – Stand 2026-11-23 09:30:00 UTC");
    assert_eq!(
        b.execute("return document.documentElement.lang"),
        serde_json::json!("de")
    );
    assert_eq!(b.text_of("#status-pending td.num"), "1");
    // The queue's statuses and the events' in German too.
    assert_eq!(b.text_of("#status-pending a"), "wartend");
    assert_eq!(b.text_of("#events-skipped td"), "übersprungen");
    b.shot("admin-de");
}

#[test]
fn the_operators_pages_in_german_in_a_browser() {
    let Some(b) = Browser::start_with(Options::default()) else {
        return;
    };
    let german = |cfg: &mut digestd::config::Config| cfg.i18n.operator_locale = "de".into();
    let web = Web::start_linked_with(super::common::TestDb::sqlite(), at(super::NOW), german);
    operator_in_german(&web, &b);
}
