//! "Send it now" and "how often and where" over HTTP, through the real
//! server on each back end: `POST /api/v1/subscriptions/{id}/flush` (admin
//! only, `Idempotency-Key`, a storm of concurrent calls posting one
//! digest), `PATCH` with a frequency, and the manage page's button and
//! form, each bad request answered 4xx with nothing written.

use digestd::access::Scope;
use digestd::clock::Clock;
use digestd::db::DbConn;
use digestd::items::{self, ItemInput};

use crate::common::at;
use crate::common::pages::{code, csrf, post_form, snapshot, world, EVIL, NOW};
use crate::common::web::{each_backend, with_token, Web};
use crate::subscription_flush::written;

/// bo creates item `n` of the Calendar a minute on, and the server's
/// clock moves a minute past it.
fn change(web: &Web, c: &mut DbConn, cal: &str, n: u128) {
    web.clock.advance(chrono::Duration::minutes(1));
    let now = web.clock.now();
    // A change is in a window that ends after its instant.
    web.clock.advance(chrono::Duration::minutes(1));
    let i = ItemInput {
        uuid: uuid::Uuid::from_u128(n).to_string(),
        collection: Some(cal.into()),
        kind: "event".into(),
        title: format!("Item {n}"),
        start: Some("2026-12-24T21:00:00Z".into()),
        actor: "bo".into(),
        at: Some(now.to_rfc3339()),
        ..Default::default()
    };
    items::put_item(c, now, &i).unwrap();
}

fn flush_post(web: &Web, id: &str, token: Option<&str>, key: Option<&str>) -> (u16, String) {
    let a = web.send(|c| {
        let b = with_token(
            c.post(web.url(&format!("/api/v1/subscriptions/{id}/flush"))),
            token,
        );
        match key {
            Some(k) => b.header("idempotency-key", k),
            None => b,
        }
    });
    (a.status, a.text)
}

#[test]
fn the_api_flushes_once_and_refuses_what_it_must() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let (admin, read) = (
            web.token("ops", Scope::Admin),
            web.token("reader", Scope::Read),
        );
        let id = w.asha_daily.0.to_string();
        let before = written(&mut c);
        let (s, body) = flush_post(web, &id, Some(&admin), None);
        assert_eq!(
            (s, body.as_str()),
            (
                200,
                format!(
                    "{{\"flushed\":false,\"message\":\"nothing waiting\",\"subscription\":{id}}}"
                )
                .as_str()
            )
        );
        change(web, &mut c, &w.cal, 1);
        let before_refusals = written(&mut c);
        assert_eq!(before, before_refusals);
        for (sub, token, status) in [
            (id.as_str(), None, 401),
            (&id, Some(read.as_str()), 403),
            ("abc", Some(admin.as_str()), 400),
            ("0", Some(&admin), 400),
            ("999999", Some(&admin), 404),
            (&w.asha_weekly.0.to_string(), Some(&admin), 409),
        ] {
            let (s, body) = flush_post(web, sub, token, None);
            assert_eq!(s, status, "{sub}: {body}");
            if status != 401 && status != 403 {
                assert!(body.starts_with("{\"error\":"), "{body}");
            }
        }
        let (s, _) = flush_post(web, &id, Some(&admin), Some("bad\tkey"));
        assert_eq!(s, 400);
        assert_eq!(written(&mut c), before_refusals, "refusals write nothing");
        // With a key: posted once, replayed after.
        let (s, first) = flush_post(web, &id, Some(&admin), Some("k-1"));
        assert_eq!(s, 201, "{first}");
        let v: serde_json::Value = serde_json::from_str(&first).unwrap();
        assert_eq!(v["flushed"], true);
        let req = v["request"].as_i64().unwrap();
        let after = written(&mut c);
        let again = web.send(|c| {
            with_token(
                c.post(web.url(&format!("/api/v1/subscriptions/{id}/flush"))),
                Some(&admin),
            )
            .header("idempotency-key", "k-1")
        });
        assert_eq!((again.status, again.text.as_str()), (201, first.as_str()));
        assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
        assert_eq!(written(&mut c), after);
        let shown = web.get(&format!("/api/v1/requests/{req}"), Some(&admin));
        assert_eq!(shown.json()["kind"], "digest");
        // Twenty at once: one digest.
        change(web, &mut c, &w.cal, 2);
        let answers: Vec<u16> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..20)
                .map(|_| s.spawn(|| flush_post(web, &id, Some(&admin), None).0))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(
            answers.iter().filter(|s| **s == 201).count(),
            1,
            "{answers:?}"
        );
        assert_eq!(
            answers.iter().filter(|s| **s == 200).count(),
            19,
            "{answers:?}"
        );
    });
}

#[test]
fn patch_changes_the_frequency_and_refuses_bad_input() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let admin = web.token("ops", Scope::Admin);
        let path = format!("/api/v1/subscriptions/{}", w.asha_daily);
        let patch = |body: &str| {
            web.send(|c| {
                with_token(c.patch(web.url(&path)), Some(&admin))
                    .header("content-type", "application/json")
                    .body(body.to_string())
            })
        };
        let before = written(&mut c);
        for body in [
            r#"{"frequency":"fortnightly"}"#,
            r#"{"frequency":"daily\r\nX-Evil: 1"}"#,
            r#"{"frequency":"weekly","day":"Funday"}"#,
            r#"{"hour":24}"#,
            r#"{"frequency":"hourly","hour":9}"#,
            r#"{"channels":["xmpp"]}"#,
            r#"{"frequency":7}"#,
        ] {
            let a = patch(body);
            assert_eq!(a.status, 400, "{body}: {}", a.text);
            assert!(!a.error().is_empty());
        }
        assert_eq!(written(&mut c), before);
        let a = patch(r#"{"frequency":"weekly","day":"fri","hour":7}"#);
        assert_eq!(a.status, 200, "{}", a.text);
        let v = a.json();
        assert_eq!(
            (
                v["frequency"].as_str(),
                v["hour"].as_i64(),
                v["day"].as_str()
            ),
            (Some("weekly"), Some(7), Some("fri"))
        );
        let a = patch(r#"{"frequency":"hourly"}"#);
        assert_eq!(a.json()["hour"], serde_json::Value::Null);
    });
}

/// Cadence forms refused with 400, nothing written: an unknown or hostile
/// frequency or day, an hour out of range or `long`, no channel, a channel
/// with no address.
fn hostile_cadences(long: &str) -> Vec<Vec<(&'static str, &str)>> {
    vec![
        vec![
            ("frequency", "fortnightly"),
            ("hour", "7"),
            ("day", "mon"),
            ("ch_email", "1"),
        ],
        vec![
            ("frequency", "daily\r\nX-Evil: 1"),
            ("hour", "7"),
            ("ch_email", "1"),
        ],
        vec![("frequency", "daily"), ("hour", "24"), ("ch_email", "1")],
        vec![("frequency", "daily"), ("hour", long), ("ch_email", "1")],
        vec![
            ("frequency", "weekly"),
            ("hour", "7"),
            ("day", "Funday"),
            ("ch_email", "1"),
        ],
        vec![
            ("frequency", "weekly"),
            ("hour", "7"),
            ("day", EVIL),
            ("ch_email", "1"),
        ],
        vec![("frequency", "daily"), ("hour", "7")],
        vec![("frequency", "daily"), ("hour", "7"), ("ch_xmpp", "1")],
        vec![("frequency", EVIL), ("hour", "7"), ("ch_email", "1")],
    ]
}

#[test]
fn the_page_sends_now_and_changes_the_cadence() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let path = format!("/s/{asha}");
        let page = web.get(&path, None).text;
        let daily = w.asha_daily.0.to_string();
        assert!(page.contains(&format!("id=\"flush-{daily}\"")));
        assert!(
            !page.contains(&format!("id=\"flush-{}\"", w.asha_weekly)),
            "a forward digest has nothing waiting"
        );
        assert!(page.contains(&format!("id=\"frequency-{daily}\"")));
        let token = csrf(&page);
        let flush = |sub: &str, t: &str| {
            post_form(
                web,
                &path,
                &[("csrf", t), ("action", "flush"), ("subscription", sub)],
            )
        };
        let a = flush(&daily, &token);
        assert_eq!(
            a.header("location").unwrap(),
            format!("{path}?done=nothing")
        );
        change(web, &mut c, &w.cal, 1);
        let before = snapshot(&mut c);
        // Another's subscription under this code, or no token: nothing.
        let bo = w.bo_daily.0.to_string();
        assert_eq!(flush(&bo, &token).status, 404);
        assert_eq!(flush(&daily, "x").status, 403);
        assert_eq!(snapshot(&mut c), before);
        let a = flush(&daily, &token);
        assert_eq!(a.status, 303);
        assert_eq!(
            a.header("location").unwrap(),
            format!("{path}?done=flushed")
        );
        let t = web.get(&format!("{path}?done=flushed"), None).text;
        assert!(t.contains("Sent: the digest is on its way."));
        assert_eq!(crate::subscription_flush::sent(&mut c, "Item 1"), 1);
        assert_eq!(
            flush(&daily, &token).header("location").unwrap(),
            format!("{path}?done=nothing")
        );
        // The cadence form: hostile values refused, nothing written.
        let before = snapshot(&mut c);
        let long = "7".repeat(10_000);
        let cadence = |sub: &str, fields: &[(&str, &str)]| {
            let mut f = vec![
                ("csrf", token.as_str()),
                ("action", "cadence"),
                ("subscription", sub),
            ];
            f.extend_from_slice(fields);
            post_form(web, &path, &f)
        };
        for fields in hostile_cadences(&long) {
            let a = cadence(&daily, &fields);
            assert_eq!(a.status, 400, "{fields:?}");
            assert!(a.text.contains("class=\"error\""), "{}", a.text);
            assert!(!a.text.contains(EVIL) && !a.text.contains("\r\nX-Evil"));
        }
        let ok = [
            ("frequency", "weekly"),
            ("hour", "7"),
            ("day", "tue"),
            ("ch_email", "1"),
            ("ch_sms", "1"),
        ];
        assert_eq!(cadence(&bo, &ok).status, 404);
        assert_eq!(snapshot(&mut c), before);
        let a = cadence(&daily, &ok);
        assert_eq!(
            a.header("location").unwrap(),
            format!("{path}?done=cadence")
        );
        let s = digestd::subscriptions::get(&mut c, w.asha_daily).unwrap();
        assert_eq!(
            (
                s.frequency.as_str(),
                s.hour_of_day,
                s.day_of_week,
                s.channels.clone()
            ),
            (
                "weekly",
                Some(7),
                Some(1),
                vec!["email".to_string(), "sms".to_string()]
            )
        );
        let t = web.get(&format!("{path}?done=cadence"), None).text;
        assert!(t.contains("Weekly on Tuesday at 07:00"), "{t}");
    });
}

/// A group's subscription: the operator flushes it (to the group, as its
/// digests go); a member's page offers no button for it, and the form
/// naming it is the bad-link page, nothing written.
#[test]
fn a_groups_digest_is_the_operators_to_send_now() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let sub = crate::common::pages::team(&mut c, &w.cal, &["asha"], 9);
        change(web, &mut c, &w.cal, 1);
        let asha = code(&mut c, w.asha);
        let path = format!("/s/{asha}");
        let page = web.get(&path, None).text;
        assert!(page.contains(&format!("id=\"group-sub-{sub}\"")));
        assert!(!page.contains(&format!("id=\"flush-{sub}\"")));
        let before = snapshot(&mut c);
        let f = [
            ("csrf", csrf(&page)),
            ("action", "flush".into()),
            ("subscription", sub.0.to_string()),
        ];
        let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(post_form(web, &path, &f).status, 404);
        assert_eq!(snapshot(&mut c), before);
        let admin = web.token("ops", Scope::Admin);
        let (s, body) = flush_post(web, &sub.0.to_string(), Some(&admin), None);
        assert_eq!(s, 201, "{body}");
        let d = crate::subscription_flush::digests(&mut c);
        assert_eq!(d.last().unwrap().0, Some(sub.0));
        // Both asha's and the group's Calendar digest hold the change: the
        // group's was flushed, asha's waits for 09:00.
        assert_eq!(crate::subscription_flush::sent(&mut c, "Item 1"), 1);
    });
}
