//! A held notification follows a change of quiet hours made through each
//! face: the CLI (`user set`, `user import`, `group set`; on SQLite and
//! PostgreSQL), the API (`PUT /api/v1/users/{name}`, the bulk `POST
//! /api/v1/users`, `PUT /api/v1/groups/{name}`) and the manage page's
//! settings form: due at once, sent by the next pass or held again until
//! the new window's end, with `request show` saying which.

use crate::common;

use common::cli::Env;
use common::delivery::in_fresh_dir;
use common::pages::{code, csrf, mails_in, post_form, world, NOW};
use common::web::{each_backend, Web};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::config::EmailConfig;
use digestd::db::schema::delivery_log;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery, RELEASED};
use digestd::ids::RequestId;
use digestd::manage;
use digestd::parties::UserChanges;
use serde_json::{json, Value};

const HELD: &str = "held: quiet hours until 07:00 Europe/Paris (06:00 UTC)";

/// The QA's steps: ben in Paris, quiet at night, a notification held at
/// 21:30 UTC; `user set ben --quiet ''` at 21:40; the pass at 21:41 sends
/// it, once. Then `user import` narrows the window and `group set` clears
/// a group's.
fn the_cli_releases(env: &Env) {
    env.ops_and("ben", "Europe/Paris", "ben@example.com");
    env.ok(&["user", "set", "ben", "--quiet", "22:00-07:00"]);
    let notify = |when: &str, to: &str| {
        let mut args = vec!["--now", when, "notify", "--from", "ops", "--to", to];
        args.extend(["--subject", "Disk", "--message", "Full."]);
        env.ok(&args).trim().to_string()
    };
    let run = |when: &str| env.ok(&["--now", when, "queue", "run"]);
    let id = notify("2026-12-03T21:30:00Z", "ben");
    assert!(run("2026-12-03T21:30:00Z").contains("held 1 (quiet hours)"));
    assert!(env.ok(&["request", "show", &id]).contains(HELD));
    env.ok(&[
        "--now",
        "2026-12-03T21:40:00Z",
        "user",
        "set",
        "ben",
        "--quiet",
        "",
    ]);
    let show = env.ok(&["request", "show", &id]);
    assert!(show.contains(RELEASED), "{show}");
    let pass = run("2026-12-03T21:41:00Z");
    assert!(!pass.contains("held"), "{pass}");
    assert_eq!(env.request_json(&id)["status"], "sent");
    run("2026-12-04T06:00:00Z");
    let mut c = TestDb::existing(&env.url).conn();
    let logged = delivery_log::table
        .select(delivery_log::outcome)
        .order(delivery_log::id.asc())
        .load::<String>(&mut c)
        .unwrap();
    assert_eq!(logged, ["transient", "sent"], "held once, sent once");
    // Quiet again; `user import` narrows the window: held until 23:00.
    env.ok(&["user", "set", "ben", "--quiet", "22:00-07:00"]);
    let id = notify("2026-12-03T21:42:00Z", "ben");
    assert!(run("2026-12-03T21:42:00Z").contains("held 1"));
    let line = json!({"name": "ben", "tz": "Europe/Paris", "quiet_hours": "22:00-23:00"});
    env.ok_in(&["user", "import"], line.to_string().as_bytes());
    assert!(run("2026-12-03T21:43:00Z").contains("held 1"));
    let show = env.ok(&["request", "show", &id]);
    assert!(
        show.contains("held: quiet hours until 23:00 Europe/Paris (22:00 UTC)"),
        "{show}"
    );
    run("2026-12-03T22:00:00Z");
    assert_eq!(env.request_json(&id)["status"], "sent");
    // A group's own address follows the group's window.
    let args = ["group", "add", "team", "--email", "team@example.com"];
    env.ok(&[
        &args[..],
        &["--tz", "Europe/Paris", "--quiet", "22:00-07:00"],
    ]
    .concat());
    let id = notify("2026-12-03T22:30:00Z", "team");
    assert!(run("2026-12-03T22:30:00Z").contains("held 1"));
    env.ok(&["group", "set", "team", "--quiet", ""]);
    assert!(!run("2026-12-03T22:31:00Z").contains("held"));
    assert_eq!(env.request_json(&id)["status"], "sent");
}

#[test]
fn the_cli_releases_held_rows_when_quiet_hours_change() {
    the_cli_releases(&Env::init());
    if let Some(pg) = TestDb::postgres() {
        let mut env = Env::new();
        env.url = pg.url.clone();
        env.ok(&["init"]);
        the_cli_releases(&env);
    }
}

/// A delivery into a fresh directory.
fn delivery() -> (Delivery, std::path::PathBuf) {
    let (d, email) = in_fresh_dir();
    (d, email.dir.into())
}

fn notify(web: &Web, to: &str, when: &str) -> RequestId {
    let mut c = web.db.conn();
    let n = queue::NewNotification {
        from: "ops".into(),
        to: to.into(),
        subject: "Disk".into(),
        message: "Full.".into(),
        ..Default::default()
    };
    queue::post_request(&mut c, &EmailConfig::default(), &n, at(when)).unwrap()
}

fn pass(web: &Web, d: &mut Delivery, when: &str) -> queue::PassReport {
    queue::run_pass(&mut web.db.conn(), d, at(when)).unwrap()
}

fn reply(web: &Web, r: RequestId) -> (String, Option<String>) {
    let v = queue::show(&mut web.db.conn(), r).unwrap();
    let m = v.recipients[0].reply_message.clone();
    (v.status.as_str().to_string(), m)
}

#[test]
fn the_api_releases_held_rows_when_quiet_hours_change() {
    each_backend(at("2026-12-03T21:00:00Z"), |web| {
        let t = web.token("ops", Scope::Admin);
        let put = |path: &str, body: Value| {
            let a = web.put(path, Some(&t), body.to_string());
            assert!(a.status == 200 || a.status == 201, "{path}: {}", a.text);
        };
        put(
            "/api/v1/users/ops",
            json!({"tz": "UTC", "email": "ops@example.com"}),
        );
        let night = json!({"tz": "Europe/Paris", "email": "ben@example.com",
            "quiet_hours": "22:00-07:00"});
        put("/api/v1/users/ben", night.clone());
        let (mut d, dir) = delivery();
        let r = notify(web, "ben", "2026-12-03T21:30:00Z");
        assert_eq!(pass(web, &mut d, "2026-12-03T21:30:00Z").held, 1);
        put("/api/v1/users/ben", json!({"quiet_hours": ""}));
        assert_eq!(reply(web, r), ("sending".into(), Some(RELEASED.into())));
        assert_eq!(pass(web, &mut d, "2026-12-03T21:41:00Z").held, 0);
        assert_eq!(reply(web, r).0, "sent");
        assert_eq!(mails_in(&dir).len(), 1);
        // The bulk POST moves ben to Tokyo: held again until 07:00 there.
        put("/api/v1/users/ben", night);
        let r = notify(web, "ben", "2026-12-03T21:42:00Z");
        assert_eq!(pass(web, &mut d, "2026-12-03T21:42:00Z").held, 1);
        let bulk = json!([{"name": "ben", "tz": "Asia/Tokyo"}]).to_string();
        let a = web.post("/api/v1/users", Some(&t), bulk);
        assert!(a.status < 300, "{}", a.text);
        assert_eq!(pass(web, &mut d, "2026-12-03T21:43:00Z").held, 1);
        let tokyo = "held: quiet hours until 07:00 Asia/Tokyo (22:00 UTC)";
        assert_eq!(reply(web, r), ("sending".into(), Some(tokyo.into())));
        // A group's own address follows the group's window.
        put(
            "/api/v1/groups/team",
            json!({"email": "team@example.com", "tz": "Europe/Paris",
                "quiet_hours": "22:00-07:00"}),
        );
        let g = notify(web, "team", "2026-12-03T21:44:00Z");
        assert_eq!(pass(web, &mut d, "2026-12-03T21:44:00Z").held, 1);
        put("/api/v1/groups/team", json!({"quiet_hours": "22:00-22:45"}));
        assert_eq!(pass(web, &mut d, "2026-12-03T21:45:00Z").held, 0);
        assert_eq!(reply(web, g).0, "sent");
        assert_eq!(mails_in(&dir).len(), 2);
    });
}

/// In [`world`], asha quiet from 00:00 to 12:00 (Madrid) and a
/// notification from bo to her posted at [`NOW`] (01:30 there).
pub(crate) fn quiet_asha_notified(c: &mut DbConn) -> RequestId {
    let ch = UserChanges {
        quiet_hours: Some("00:00-12:00".into()),
        ..Default::default()
    };
    manage::update_user(c, "asha", &ch).unwrap();
    let n = queue::NewNotification {
        from: "bo".into(),
        to: "asha".into(),
        subject: "Rota".into(),
        message: "Changed.".into(),
        ..Default::default()
    };
    queue::post_request(c, &EmailConfig::default(), &n, at(NOW)).unwrap()
}

#[test]
fn the_manage_page_releases_held_rows_when_quiet_hours_change() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let r = quiet_asha_notified(&mut c);
        let (mut d, dir) = delivery();
        assert_eq!(pass(web, &mut d, NOW).held, 1);
        let path = format!("/s/{}", code(&mut c, w.asha));
        let token = csrf(&web.get(&path, None).text);
        let form = [
            ("csrf", token.as_str()),
            ("action", "prefs"),
            ("quiet_hours", "00:00-01:00"),
        ];
        assert_eq!(post_form(web, &path, &form).status, 303);
        // 01:31 in Madrid: past the new end, sent.
        assert_eq!(pass(web, &mut d, "2026-11-22T00:31:00Z").held, 0);
        assert_eq!(reply(web, r).0, "sent");
        assert_eq!(mails_in(&dir).len(), 1);
    });
}
