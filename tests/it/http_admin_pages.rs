//! The operator's pages (`/admin…`) through the real server on each back
//! end, signed in as `http_admin.rs` does: what each page shows (seeded
//! through library calls); cancelling a request, re-enabling an address;
//! and hostile filters (CR/LF, 10 kB, unknown values) → 400 with nothing
//! written.

use crate::common;
use crate::http_admin::{form, get, login, sessions, sid, signed_in, status_of};

use chrono::Duration;
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::DbConn;
use digestd::deliver::queue;
use digestd::ids::RequestId;
use digestd::parties::{self, Channel, ContactChange};
use digestd::schedule;
use digestd::subscriptions::{SubscribeRequest, Subscribed};
use digestd::validate::UrlPolicy;

use common::at;
use common::pages::{csrf, snapshot, world, EVIL, NOW};
use common::web::{each_backend, Answer};

#[test]
fn the_status_page_shows_the_queue_the_last_ticks_and_the_leases() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        notify(&mut c, "asha", "bo", "first");
        notify(&mut c, "bo", "asha", "second");
        let mut comp =
            digestd::digest::Composer::new(&DigestConfig::default(), &EmailConfig::default())
                .unwrap();
        // asha's 09:00 Madrid is 08:00Z, bo's 07:00 New York 12:00Z: two
        // empty runs (nothing changed), the later 4 h 7 min late.
        let tick_at = at("2026-11-22T12:07:00Z");
        let runs = schedule::run_tick(&mut c, tick_at, "me:1:ab", Duration::minutes(5), &mut comp)
            .unwrap()
            .unwrap();
        assert_eq!(runs.len(), 2);
        assert!(schedule::lease::acquire(
            &mut c,
            "queue",
            "host-b:42:cafe",
            at(NOW),
            Duration::hours(1)
        )
        .unwrap());
        let s = signed_in(web);
        web.clock.advance(Duration::minutes(30));
        let t = get(web, "/admin", &s).text;
        for want in [
            "<tr id=\"status-pending\"><td><a href=\"/admin/requests?status=pending\">pending</a></td><td class=\"num\">2</td>",
            "<td class=\"num\">0</td>",
            "Oldest pending request: <span id=\"oldest\">2026-11-22 00:30:00 UTC (30 min 0 s ago)</span>",
            "<tr class=\"tick\"><td>2026-11-22 12:07:00 UTC</td><td class=\"num\">2</td><td class=\"num\">0</td><td class=\"num\">2</td><td>4 h 7 min</td></tr>",
            "<tr id=\"lease-queue\"><td>queue</td><td>host-b:42:cafe</td><td>2026-11-22 01:30:00 UTC</td><td>never</td>",
            "<tr id=\"lease-tick\"><td>tick</td><td>nobody</td><td>—</td><td>2026-11-22 12:07:00 UTC</td>",
            "digestd_tick_duration_seconds",
        ] {
            assert!(t.contains(want), "{want:?} in {t}");
        }
        // An hour later the queue lease has expired.
        web.clock.advance(Duration::hours(2));
        let t = get(web, "/admin", &s).text;
        assert!(
            t.contains("<td>nobody (expired lease of host-b:42:cafe)</td>"),
            "{t}"
        );
    });
}

pub(crate) fn notify(c: &mut DbConn, from: &str, to: &str, subject: &str) -> RequestId {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &queue::NewNotification {
            from: from.into(),
            to: to.into(),
            subject: subject.into(),
            message: "Body.".into(),
            ..Default::default()
        },
        at(NOW),
    )
    .unwrap()
}

/// Three requests from asha: to a mailbox that refuses (550: failed), to
/// one that is busy (451: retrying, still sending), and, after the queue
/// pass, to bo (pending).
pub(crate) fn requests(c: &mut DbConn) -> (RequestId, RequestId, RequestId) {
    for (name, addr) in [("gone", "gone@example.net"), ("busy", "busy@example.net")] {
        common::delivery::user(c, name, addr);
    }
    let failed = notify(c, "asha", "gone", "to gone");
    let busy = notify(c, "asha", "busy", "to busy");
    let smtp = common::smtp::FaultSmtp::start();
    let mut d = common::delivery::smtp(&smtp.url());
    queue::run_pass(c, &mut d, at(NOW)).unwrap();
    let pending = notify(c, "asha", "bo", "to bo <b>");
    (pending, failed, busy)
}

#[test]
fn requests_are_filtered_shown_with_their_attempts_and_cancelled() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        let (pending, failed, busy) = requests(&mut c);
        assert_eq!(status_of(&mut c, failed), "failed");
        assert_eq!(status_of(&mut c, busy), "sending");
        let s = signed_in(web);
        let all = get(web, "/admin/requests", &s);
        assert_eq!(all.status, 200);
        assert_eq!(all.text.matches("<tr class=\"request\"").count(), 3);
        assert!(all.text.contains("to bo &#60;b&#62;"), "{}", all.text);
        let ids = |a: &Answer| -> Vec<i64> {
            a.text
                .match_indices("<tr class=\"request\" id=\"request-")
                .map(|(i, m)| {
                    let rest = &a.text[i + m.len()..];
                    rest[..rest.find('"').unwrap()].parse().unwrap()
                })
                .collect()
        };
        assert_eq!(ids(&all), [pending.0, busy.0, failed.0]);
        for (q, want) in [
            ("status=failed", vec![failed.0]),
            ("status=pending", vec![pending.0]),
            ("status=sending&sender=asha", vec![busy.0]),
            ("recipient=gone", vec![failed.0]),
            ("sender=bo", vec![]),
            (
                "status=&sender=&recipient=",
                vec![pending.0, busy.0, failed.0],
            ),
            (&format!("before={}", busy.0), vec![failed.0]),
        ] {
            let a = get(web, &format!("/admin/requests?{q}"), &s);
            assert_eq!(a.status, 200, "{q}: {}", a.text);
            assert_eq!(ids(&a), want, "{q}");
        }

        // One request: each recipient, every attempt with its reply.
        let a = get(web, &format!("/admin/requests/{}", failed.0), &s);
        assert_eq!(a.status, 200, "{}", a.text);
        for want in [
            "<span id=\"status\">failed</span>",
            "gone@example.net",
            "gave up",
            "<td>gone@example.net</td><td>permanent</td><td>550 permanent error (550): 5.1.1 no such user here</td>",
        ] {
            assert!(a.text.contains(want), "{want:?} in {}", a.text);
        }
        assert!(!a.text.contains("Cancel this request"), "finished");
        let b = get(web, &format!("/admin/requests/{}", busy.0), &s);
        assert!(
            b.text.contains("<td>transient</td><td>451 ") && b.text.contains("4.3.0 mailbox busy"),
            "{}",
            b.text
        );
        assert!(b.text.contains("Cancel this request"));
        assert_eq!(get(web, "/admin/requests/99999", &s).status, 404);
        assert_eq!(get(web, "/admin/requests/x%0D%0Ay", &s).status, 404);

        // Cancel: without the form token nothing happens.
        let path = format!("/admin/requests/{}/cancel", busy.0);
        assert_eq!(form(web, &path, Some(&s), &[]).status, 403);
        assert_eq!(form(web, &path, Some(&s), &[("csrf", "x")]).status, 403);
        assert_eq!(status_of(&mut c, busy), "sending");
        let token = csrf(&b.text);
        let done = form(web, &path, Some(&s), &[("csrf", &token)]);
        assert_eq!(done.status, 303, "{}", done.text);
        assert_eq!(
            done.header("location").unwrap(),
            format!("/admin/requests/{}?done=cancelled", busy.0)
        );
        assert_eq!(status_of(&mut c, busy), "cancelled");
        let again = form(web, &path, Some(&s), &[("csrf", &token)]);
        assert_eq!(again.status, 409, "{}", again.text);
        assert!(again.text.contains("already cancelled"), "{}", again.text);
        // Another session's token is not this one's.
        let other = {
            let secret = web.token("ops2", Scope::Admin);
            sid(&login(web, &secret))
        };
        let p2 = format!("/admin/requests/{}/cancel", pending.0);
        assert_eq!(
            form(web, &p2, Some(&other), &[("csrf", &token)]).status,
            403
        );
        assert_eq!(status_of(&mut c, pending), "pending");
    });
}

#[test]
fn hostile_filters_are_400_and_write_nothing() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        notify(&mut c, "asha", "bo", "one");
        let s = signed_in(web);
        let before = snapshot(&mut c);
        let sessions_before = sessions(&mut c);
        let long = "a".repeat(10_000);
        for (path, q) in [
            ("/admin/requests", "status=bogus".to_string()),
            ("/admin/requests", "status=pending%0D%0AX:%20y".to_string()),
            ("/admin/requests", "sender=asha%0D%0Abo".to_string()),
            ("/admin/requests", format!("recipient={long}")),
            ("/admin/requests", "recipient=nobody".to_string()),
            ("/admin/requests", "sender=%3Cscript%3E".to_string()),
            ("/admin/requests", "before=abc".to_string()),
            ("/admin/subscribers", "name=a%0Ab".to_string()),
            ("/admin/subscribers", format!("name={long}")),
            ("/admin/subscribers", "disabled=yes".to_string()),
            ("/admin/subscribers", "after=%3Cb%3E".to_string()),
            ("/admin/grid", "time=bogus".to_string()),
            ("/admin/grid", "week=next%20week".to_string()),
            ("/admin/grid", "user=nobody".to_string()),
            ("/admin/grid", format!("user={long}")),
        ] {
            let a = get(web, &format!("{path}?{q}"), &s);
            assert_eq!(
                a.status,
                400,
                "{path}?{}: {}",
                &q[..q.len().min(60)],
                a.text
            );
            assert!(a.text.contains("class=\"error\""), "{}", a.text);
            assert!(!a.text.contains(&long) && !a.text.contains("<script>"));
            assert!(!a.text.contains("X: y\r"), "no header smuggled");
        }
        // Forms too: hostile fields are refused before anything is done.
        let home = get(web, "/admin/subscribers", &s);
        let token = csrf(&home.text);
        for fields in [
            vec![
                ("csrf", token.as_str()),
                ("party", "asha"),
                ("channel", "fax"),
            ],
            vec![
                ("csrf", token.as_str()),
                ("party", "asha\r\n"),
                ("channel", "email"),
            ],
            vec![
                ("csrf", token.as_str()),
                ("party", long.as_str()),
                ("channel", "email"),
            ],
        ] {
            let a = form(web, "/admin/subscribers/enable", Some(&s), &fields);
            assert_eq!(a.status, 400, "{}", a.text);
        }
        let a = form(
            web,
            "/admin/subscribers/enable",
            Some(&s),
            &[("csrf", &token), ("party", "nobody"), ("channel", "email")],
        );
        assert_eq!(a.status, 404, "{}", a.text);
        assert_eq!(snapshot(&mut c), before);
        assert_eq!(sessions(&mut c), sessions_before);
    });
}

#[test]
fn subscribers_show_addresses_bounces_and_re_enable() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        parties::change_contact(
            &mut c,
            at(NOW),
            "asha",
            Channel::Email,
            &ContactChange::Disable,
        )
        .unwrap();
        // A webhook's URL carries its receiver's credential in the path.
        let hook = "https://hooks.example.com/services/T000/B000/s3cr3t";
        parties::set_webhook(&mut c, at(NOW), "bo", hook, None, UrlPolicy::ANY).unwrap();
        let s = signed_in(web);
        let a = get(web, "/admin/subscribers", &s);
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(!a.text.contains("s3cr3t"), "{}", a.text);
        for want in [
            "<td>webhook</td><td>https://hooks.example.com/***</td>",
            "<section class=\"user\" id=\"user-asha\">",
            "<section class=\"user\" id=\"user-bo\">",
            "<td>email</td><td>asha@example.com</td><td>yes</td><td><span class=\"bad\">disabled</span></td><td class=\"num\">0</td>",
            "<td>sms</td><td>+34600111222</td>",
            "<td>email</td><td>bo@example.org</td><td>no</td><td>enabled</td>",
            &format!("#{} <strong>Calendar</strong>: changes, Daily at 09:00", w.asha_daily),
            &format!("#{} <strong>Calendar</strong>: changes, Daily at 7:00 AM", w.bo_daily),
            "&#60;script&#62;",
        ] {
            assert!(a.text.contains(want), "{want:?} in {}", a.text);
        }
        assert!(!a.text.contains(EVIL));
        assert_eq!(a.text.matches("Re-enable").count(), 1);
        let only = |q: &str| -> Vec<String> {
            let t = get(web, &format!("/admin/subscribers?{q}"), &s).text;
            t.match_indices("<section class=\"user\" id=\"user-")
                .map(|(i, m)| {
                    let r = &t[i + m.len()..];
                    r[..r.find('"').unwrap()].to_string()
                })
                .collect()
        };
        assert_eq!(only("name=b"), ["bo"]);
        assert_eq!(only("name=sh"), ["asha"]);
        assert_eq!(only("name=%25"), Vec::<String>::new(), "% is literal");
        assert_eq!(only("disabled=1"), ["asha"]);
        assert_eq!(only("after=asha"), ["bo"]);

        let token = csrf(&a.text);
        let fields = [("party", "asha"), ("channel", "email")];
        assert_eq!(
            form(web, "/admin/subscribers/enable", Some(&s), &fields).status,
            403
        );
        let cp = |c: &mut DbConn| {
            parties::contact_points(c, w.asha)
                .unwrap()
                .into_iter()
                .find(|p| p.channel == "email")
                .unwrap()
        };
        assert!(cp(&mut c).disabled);
        let done = form(
            web,
            "/admin/subscribers/enable",
            Some(&s),
            &[("csrf", &token), ("party", "asha"), ("channel", "email")],
        );
        assert_eq!(done.status, 303, "{}", done.text);
        assert!(!cp(&mut c).disabled);
        let after = get(web, &done.header("location").unwrap(), &s);
        assert!(after
            .text
            .contains("Enabled: messages go to that address again"));
        assert_eq!(after.text.matches("Re-enable").count(), 0);
    });
}

#[test]
fn the_grid_page_draws_the_week_with_groups_and_empty_runs() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        parties::create_group(&mut c, at(NOW), "team", Some("team@example.org")).unwrap();
        parties::add_member(&mut c, "team", "bo").unwrap();
        let team = SubscribeRequest {
            party: "team".into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            hour: Some(12),
            ..Default::default()
        };
        let Subscribed::Created(_) = digestd::manage::subscribe(&mut c, at(NOW), &team).unwrap()
        else {
            panic!("created")
        };
        let mut comp =
            digestd::digest::Composer::new(&DigestConfig::default(), &EmailConfig::default())
                .unwrap();
        // Sunday 12:00Z: bo's and the team's runs (and asha's of 08:00Z),
        // with nothing to say.
        let runs = schedule::tick::tick(&mut c, at("2026-11-22T12:00:00Z"), &mut comp).unwrap();
        assert_eq!(runs.len(), 3);
        let s = signed_in(web);
        let a = get(web, "/admin/grid?user=bo&week=2026-11-20T00:00:00Z", &s);
        assert_eq!(a.status, 200, "{}", a.text);
        let t = &a.text;
        assert!(
            t.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{t}"
        );
        for want in [
            "digests in the week of 2026-11-16 (user bo)",
            "hour of the day (server time (UTC))",
            // Six of bo's and six of the team's at 12:00Z count; Sunday's two
            // ran empty and are shown apart.
            "peak: Mon 12:00 with 2 of 12 digests",
            "2 empty runs (ran, nothing to send) not counted",
            "Sun 12:00 server time (UTC): 0 digests, 2 empty runs",
        ] {
            assert!(t.contains(want), "{want:?} in {t}");
        }
        let local = get(
            web,
            "/admin/grid?user=bo&week=2026-11-20T00:00:00Z&time=local",
            &s,
        );
        assert!(local.text.contains("hour of the day (local time)"));
        // bo's 07:00 in New York; the team's 12:00 UTC (groups: UTC).
        assert!(
            local
                .text
                .contains("Mon 07:00 local time: 1 digest, 0 empty runs"),
            "{}",
            local.text
        );
        assert!(local
            .text
            .contains("Mon 12:00 local time: 1 digest, 0 empty runs"));
        // Everyone: asha's too.
        let all = get(web, "/admin/grid?week=2026-11-20T00:00:00Z", &s);
        assert!(all.text.contains("(all users)"));
        assert!(!all.text.contains("with 2 of 12 digests"));
        let csp = all.header("content-security-policy").unwrap();
        assert!(
            !csp.contains("img-src") && !csp.contains("script-src"),
            "{csp}"
        );
    });
}

#[test]
fn home_counts_every_waiting_event_and_a_days_finished_ones() {
    use digestd::db::schema::events as ev;
    use digestd::events::{self, Event, Kind};
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        diesel::delete(ev::table).execute(&mut c).unwrap();
        let record = |c: &mut DbConn, when, n: usize| -> Vec<i64> {
            let list = vec![Event::new(Kind::SignupConfirmed); n];
            c.write_tx(|c| events::record_in_tx(c, when, &list))
                .unwrap();
            ev::table
                .filter(ev::occurred_at.eq(when.naive_utc()))
                .select(ev::id)
                .order(ev::id.asc())
                .load(c)
                .unwrap()
        };
        let set = |c: &mut DbConn, id: i64, status: &str, error: Option<&str>| {
            diesel::update(ev::table.find(id))
                .set((ev::status.eq(status), ev::last_error.eq(error)))
                .execute(c)
                .unwrap();
        };
        // Two days old: one still waiting, two sent, one failed.
        let old = record(&mut c, at(NOW) - Duration::days(2), 4);
        set(&mut c, old[1], "sent", None);
        set(&mut c, old[2], "sent", None);
        set(&mut c, old[3], "failed", Some("old failure"));
        // Within the day: one waiting, one sent, one failed, one skipped.
        let new = record(&mut c, at(NOW) - Duration::hours(1), 4);
        set(&mut c, new[1], "sent", None);
        set(&mut c, new[2], "failed", Some("HTTP 500 from receiver"));
        set(&mut c, new[3], "skipped", None);
        let s = signed_in(web);
        let t = get(web, "/admin", &s).text;
        for want in [
            "<tr id=\"events-pending\"><td>pending</td><td class=\"num\">2</td>",
            "<tr id=\"events-sent\"><td>sent</td><td class=\"num\">1</td>",
            "<tr id=\"events-failed\"><td>failed</td><td class=\"num\">1</td>",
            "<tr id=\"events-skipped\"><td>skipped</td><td class=\"num\">1</td>",
            "HTTP 500 from receiver",
        ] {
            assert!(t.contains(want), "{want:?} in {t}");
        }
        assert!(!t.contains("old failure"), "{t}");
    });
}
