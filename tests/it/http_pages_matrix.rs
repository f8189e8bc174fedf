//! The manage page's Matrix ID form (`action=matrix` / `unmatrix`) through
//! the real server on each back end: a good ID stored as `contact --set`
//! stores it and shown masked; hostile IDs (CR/LF, control characters,
//! too long, the wrong sigil, not UTF-8, too large a form) answered with
//! the page and one line, or 413, with nothing written; a missing or
//! foreign form token 403; a webhook URL shown masked as the operator's,
//! with no form that could change it.

use crate::common;

use common::at;
use common::pages::{code, csrf, post_form, post_raw, snapshot, world, NOW};
use common::web::each_backend;
use diesel::prelude::*;
use digestd::db::schema::{contact_points, parties};
use digestd::parties as library;

/// asha's Matrix contact point: (address, verified, disabled, room).
fn matrix_of(c: &mut digestd::db::DbConn) -> Option<(String, bool, bool, Option<String>)> {
    contact_points::table
        .inner_join(parties::table.on(parties::id.eq(contact_points::party_id)))
        .filter(parties::name.eq("asha"))
        .filter(contact_points::channel.eq("matrix"))
        .select((
            contact_points::address,
            contact_points::verified,
            contact_points::disabled,
            contact_points::matrix_room,
        ))
        .first(c)
        .optional()
        .unwrap()
}

#[test]
fn a_person_adds_changes_and_removes_their_matrix_id() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let path = format!("/s/{asha}");
        let page = web.get(&path, None).text;
        assert!(
            page.contains("Add Matrix ID") && !page.contains("Remove Matrix ID"),
            "{page}"
        );
        let token = csrf(&page);
        let send = |id: &str| {
            post_form(
                web,
                &path,
                &[("csrf", &token), ("action", "matrix"), ("matrix", id)],
            )
        };
        let a = send(" @asha:example.org ");
        assert_eq!(a.status, 303, "{}", a.text);
        assert!(a.header("location").unwrap().ends_with("?done=matrix"));
        // Usable at once, as an address the operator sets: enabled, not
        // verified (the invitation to the direct room is the consent).
        assert_eq!(
            matrix_of(&mut c),
            Some(("@asha:example.org".into(), false, false, None))
        );
        let t = web.get(&format!("{path}?done=matrix"), None).text;
        assert!(
            t.contains("matrix: @a***:example.org · not verified"),
            "{t}"
        );
        assert!(t.contains("Saved: digests by Matrix"), "{t}");
        assert!(
            t.contains("Change Matrix ID") && t.contains("Remove Matrix ID"),
            "{t}"
        );
        assert!(!t.contains("@asha:example.org"), "{t}");
        // A room the listener opened goes with a new ID.
        diesel::update(contact_points::table.filter(contact_points::channel.eq("matrix")))
            .set(contact_points::matrix_room.eq("!dm:example.org"))
            .execute(&mut c)
            .unwrap();
        assert_eq!(send("@asha:example.org").status, 303);
        assert_eq!(
            matrix_of(&mut c).unwrap().3.as_deref(),
            Some("!dm:example.org"),
            "the same ID keeps its room"
        );
        assert_eq!(send("!team:example.org").status, 303);
        assert_eq!(
            matrix_of(&mut c),
            Some(("!team:example.org".into(), false, false, None))
        );
        let a = post_form(web, &path, &[("csrf", &token), ("action", "unmatrix")]);
        assert_eq!(a.status, 303, "{}", a.text);
        assert_eq!(matrix_of(&mut c), None);
        let t = web.get(&format!("{path}?done=unmatrix"), None).text;
        assert!(
            t.contains("Removed: nothing more is sent to you by Matrix."),
            "{t}"
        );
        // Nothing to remove: the page with one line, nothing written.
        let before = snapshot(&mut c);
        let a = post_form(web, &path, &[("csrf", &token), ("action", "unmatrix")]);
        assert_eq!(a.status, 400, "{}", a.text);
        assert!(
            a.text.contains("you have no Matrix ID to remove"),
            "{}",
            a.text
        );
        assert_eq!(snapshot(&mut c), before);
    });
}

#[test]
fn hostile_matrix_ids_on_the_page_write_nothing() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let bo = code(&mut c, w.bo);
        let path = format!("/s/{asha}");
        let token = csrf(&web.get(&path, None).text);
        let bo_token = csrf(&web.get(&format!("/s/{bo}"), None).text);
        let ok = [
            ("csrf", token.as_str()),
            ("action", "matrix"),
            ("matrix", "@asha:example.org"),
        ];
        assert_eq!(post_form(web, &path, &ok).status, 303);
        let stored = matrix_of(&mut c);
        let long = format!("@{}:example.org", "a".repeat(300));
        for (bad, why) in [
            ("asha:example.org", "neither @"),
            ("#asha:example.org", "neither @"),
            ("@asha", "no server"),
            ("", "it is empty"),
            ("@asha\r\n:example.org", "white space"),
            ("@asha:example.org\r\nSet-Cookie: x=1", "white space"),
            ("@asha\u{7}:example.org", "control"),
            ("@asha\u{0}:example.org", "control"),
            ("@asha:<script>.example", "not a host name"),
            ("@asha:exa mple.org", "white space"),
            (long.as_str(), "255 bytes"),
        ] {
            let before = snapshot(&mut c);
            let a = post_form(
                web,
                &path,
                &[("csrf", &token), ("action", "matrix"), ("matrix", bad)],
            );
            assert_eq!(a.status, 400, "{bad:?}: {}", a.text);
            assert!(
                a.text.contains("invalid Matrix ID") && a.text.contains(why),
                "{bad:?}: {}",
                a.text
            );
            assert!(a.text.contains("role=\"alert\""), "{}", a.text);
            assert!(!a.text.contains("<script>"), "{}", a.text);
            assert_eq!(snapshot(&mut c), before, "{bad:?}");
            assert_eq!(matrix_of(&mut c), stored, "{bad:?}");
        }
        let before = snapshot(&mut c);
        // No form token, bo's, none at all: 403.
        for t in [None, Some(bo_token.as_str()), Some("00")] {
            let mut f = vec![("action", "matrix"), ("matrix", "@eve:evil.example")];
            f.extend(t.map(|t| ("csrf", t)));
            assert_eq!(post_form(web, &path, &f).status, 403, "{t:?}");
            let mut f = vec![("action", "unmatrix")];
            f.extend(t.map(|t| ("csrf", t)));
            assert_eq!(post_form(web, &path, &f).status, 403, "{t:?}");
        }
        // A form whose bytes are not UTF-8, and one over the form limit.
        let raw = format!("csrf={token}&action=matrix&matrix=%40asha%FF%3Aexample.org");
        let a = post_raw(web, &path, "application/x-www-form-urlencoded", raw);
        assert_eq!(a.status, 400, "{}", a.text);
        let huge = format!(
            "csrf={token}&action=matrix&matrix=%40{}%3Aexample.org",
            "a".repeat(20_000)
        );
        let a = post_raw(web, &path, "application/x-www-form-urlencoded", huge);
        assert_eq!(a.status, 413, "{}", a.text);
        // No form sets a webhook: the action does not exist.
        let f = [
            ("csrf", token.as_str()),
            ("action", "webhook"),
            ("webhook", "https://evil.example/"),
        ];
        assert_eq!(post_form(web, &path, &f).status, 400);
        assert_eq!(snapshot(&mut c), before);
        assert_eq!(matrix_of(&mut c), stored);
    });
}

#[test]
fn a_webhook_is_shown_masked_as_the_operators() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        library::set_webhook(
            &mut c,
            at(NOW),
            "asha",
            "https://hooks.example.com/d/asha?token=s3cr3t",
            None,
            digestd::validate::UrlPolicy::default(),
        )
        .unwrap();
        let t = web.get(&format!("/s/{}", code(&mut c, w.asha)), None).text;
        assert!(t.contains("webhook: https://hooks.example.com/***"), "{t}");
        assert!(t.contains("set by the operator"), "{t}");
        assert!(!t.contains("s3cr3t") && !t.contains("whsec_"), "{t}");
        assert!(!t.contains("name=\"webhook\""), "{t}");
    });
}
