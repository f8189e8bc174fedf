//! The manage page's per-subscription time form (`POST /s/{code}` with
//! `action=hour`), through the real server on each back end: it moves one
//! subscription exactly as `manage::change_subscription` does (what
//! `PATCH /api/v1/subscriptions/{id}` calls), and every bad request writes
//! nothing: a hostile hour (400, the page again with one line), an hourly
//! subscription (400), another person's subscription (404), no token (403).

use crate::common;

use common::pages::{code, csrf, post_form, schedule, snapshot, world, EVIL, NOW};
use common::web::each_backend;
use common::{at, TestDb};
use digestd::manage;
use digestd::subscriptions::{Retime, SubscribeRequest, Subscribed};

#[test]
fn a_new_hour_reschedules_as_the_library_does() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let page = web.get(&format!("/s/{asha}"), None).text;
        // Each timed subscription has its own select, its hour chosen.
        let sel = format!("<select id=\"hour-{}\" name=\"hour\">", w.asha_daily);
        let i = page.find(&sel).unwrap_or_else(|| panic!("{sel} in {page}"));
        assert!(page[i..].contains("<option value=\"9\" selected>09:00</option>"));
        let token = csrf(&page);
        let id = w.asha_daily.0.to_string();
        let f = [
            ("csrf", token.as_str()),
            ("action", "hour"),
            ("subscription", &id),
            ("hour", "7"),
        ];
        let a = post_form(web, &format!("/s/{asha}"), &f);
        assert_eq!(a.status, 303, "{}", a.text);
        assert_eq!(
            a.header("location").unwrap(),
            format!("/s/{asha}?done=hour")
        );
        let t = web.get(&format!("/s/{asha}?done=hour"), None).text;
        assert!(t.contains("Changed: the next digest comes at the new time."));
        assert!(t.contains("Daily at 07:00") && !t.contains("Daily at 09:00"));
        // The same change through the library, on a twin.
        let db2 = TestDb::sqlite();
        let mut c2 = db2.conn();
        let w2 = world(&mut c2);
        let r = Retime {
            hour: Some(7),
            ..Retime::default()
        };
        manage::change_subscription(&mut c2, at(NOW), w2.asha_daily, None, &r).unwrap();
        assert_eq!(schedule(&mut c), schedule(&mut c2));
        assert_ne!(schedule(&mut c2), schedule(&mut TestDb::sqlite().conn()));
    });
}

#[test]
fn a_bad_hour_or_someone_elses_subscription_writes_nothing() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let hourly = match manage::subscribe(
            &mut c,
            at(NOW),
            &SubscribeRequest {
                party: "asha".into(),
                frequency: "hourly".into(),
                kind: "modification".into(),
                collection: Some(w.cal.clone()),
                ..Default::default()
            },
        )
        .unwrap()
        {
            Subscribed::Created(id) => id.0.to_string(),
            other => panic!("{other:?}"),
        };
        let asha = code(&mut c, w.asha);
        let path = format!("/s/{asha}");
        let page = web.get(&path, None).text;
        assert!(
            !page.contains(&format!("id=\"hour-{hourly}\"")),
            "no time form for an hourly one"
        );
        let token = csrf(&page);
        let before = snapshot(&mut c);
        let daily = w.asha_daily.0.to_string();
        let long = "7".repeat(10_000);
        for (sub, hour) in [
            (daily.as_str(), "24"),
            (&daily, "-1"),
            (&daily, "nine"),
            (&daily, "7\r\nX-Evil: 1"),
            (&daily, EVIL),
            (&daily, &long),
            (&daily, ""),
            (&hourly, "7"),
        ] {
            let f = [
                ("csrf", token.as_str()),
                ("action", "hour"),
                ("subscription", sub),
                ("hour", hour),
            ];
            let a = post_form(web, &path, &f);
            assert_eq!(a.status, 400, "{sub} {hour:.40}");
            assert!(a.text.contains("class=\"error\""), "{}", a.text);
            assert!(a.text.contains("Your digests, asha"));
            assert!(!a.text.contains(EVIL) && !a.text.contains("\r\nX-Evil"));
        }
        // No hour field at all.
        let f = [
            ("csrf", token.as_str()),
            ("action", "hour"),
            ("subscription", &daily),
        ];
        assert_eq!(post_form(web, &path, &f).status, 400);
        // Another person's subscription under my code: the bad-link page.
        let bo = w.bo_daily.0.to_string();
        let f = [
            ("csrf", token.as_str()),
            ("action", "hour"),
            ("subscription", &bo),
            ("hour", "7"),
        ];
        let a = post_form(web, &path, &f);
        assert_eq!(a.status, 404);
        assert!(a.text.contains("This link is not valid"));
        // No token, or bo's token: 403.
        let bo_token = csrf(&web.get(&format!("/s/{}", code(&mut c, w.bo)), None).text);
        for t in [None, Some(bo_token.as_str())] {
            let mut f = vec![("action", "hour"), ("subscription", &daily), ("hour", "7")];
            if let Some(t) = t {
                f.push(("csrf", t));
            }
            assert_eq!(post_form(web, &path, &f).status, 403, "{t:?}");
        }
        assert_eq!(snapshot(&mut c), before);
    });
}
