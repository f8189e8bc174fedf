//! Setting quiet hours and seeing them: the CLI (`user add/set --quiet`,
//! `group set --quiet`, `user import`, `notify --urgent`, `request show`
//! with a held row's reason), the API (`PUT /api/v1/users/{name}` and
//! `/api/v1/groups/{name}` with `quiet_hours`, `POST /api/v1/requests`
//! with `urgent`), the manage page's field and its words about a daily
//! digest inside them, and `/admin/requests/{id}`. Hostile input: exit 2,
//! 400 JSON or the page again, nothing written.

use crate::common;

use common::at;
use common::cli::Env;
use common::pages::{code, csrf, post_form, snapshot, world, NOW};
use common::web::{each_backend, Web};
use digestd::access::Scope;
use digestd::config::EmailConfig;
use digestd::deliver::queue::{self, Delivery};
use digestd::parties;
use serde_json::{json, Value};

const HOSTILE: [&str; 6] = [
    "25:00-07:00",
    "22:00-22:00",
    "22-7",
    "22:00–07:00",
    "22:00-07:00\r\nX-Evil: 1",
    "２２:００-07:00",
];

#[test]
fn the_cli_sets_clears_and_refuses_quiet_hours() {
    let env = Env::init();
    let out = env.ok(&[
        "user",
        "add",
        "ana",
        "--tz",
        "Europe/Paris",
        "--quiet",
        "22:00-07:00",
    ]);
    assert!(out.contains("quiet 22:00-07:00"), "{out}");
    env.ok(&[
        "user",
        "add",
        "ops",
        "--tz",
        "UTC",
        "--email",
        "ops@example.com",
    ]);
    env.ok(&["user", "set", "ops", "--quiet", "13:00-14:00"]);
    let users = env.users_json(&["user", "list", "--json"]);
    assert_eq!(users[0]["quiet_hours"], "22:00-07:00");
    assert_eq!(users[1]["quiet_hours"], "13:00-14:00");
    env.ok(&["user", "set", "ops", "--quiet", ""]);
    assert_eq!(
        env.users_json(&["user", "list", "--json"])[1]["quiet_hours"],
        ""
    );
    let out = env.ok(&["group", "add", "team", "--quiet", "23:30-06:15"]);
    assert!(out.contains("quiet 23:30-06:15"), "{out}");
    let out = env.ok(&["group", "set", "team", "--quiet", ""]);
    assert!(!out.contains("quiet"), "{out}");
    let before = env.ok(&["user", "list", "--json"]);
    let long = "2".repeat(5_000);
    for bad in HOSTILE.iter().copied().chain([long.as_str()]) {
        env.refused(
            &["user", "set", "ana", "--quiet", bad],
            b"",
            "invalid quiet hours",
        );
        env.refused(
            &["group", "set", "team", "--quiet", bad],
            b"",
            "invalid quiet hours",
        );
        env.refused(
            &["user", "add", "eve", "--tz", "UTC", "--quiet", bad],
            b"",
            "invalid quiet hours",
        );
        let line = json!({"name": "eve", "tz": "UTC", "quiet_hours": bad}).to_string();
        env.refused(&["user", "import"], line.as_bytes(), "invalid quiet hours");
    }
    assert_eq!(env.ok(&["user", "list", "--json"]), before);
    let line = json!({"name": "ivy", "tz": "Asia/Kolkata", "quiet_hours": "21:00-06:30"});
    env.ok_in(&["user", "import"], line.to_string().as_bytes());
    assert_eq!(
        env.users_json(&["user", "list", "--json"])[1]["quiet_hours"],
        "21:00-06:30"
    );
}

#[test]
fn request_show_says_why_and_until_when_a_row_waits() {
    let env = Env::init();
    env.ops_and("ana", "Europe/Paris", "ana@example.com");
    env.ok(&["user", "set", "ana", "--quiet", "22:00-07:00"]);
    let notify = |urgent: bool| {
        let mut args = vec!["--now", "2026-11-23T22:30:00Z", "notify", "--from", "ops"];
        args.extend(["--to", "ana", "--subject", "Disk", "--message", "Full."]);
        if urgent {
            args.push("--urgent");
        }
        env.ok(&args).trim().to_string()
    };
    let (held, urgent) = (notify(false), notify(true));
    let pass = env.ok(&["queue", "run", "--at", "2026-11-23T22:30:00Z"]);
    assert!(pass.contains("held 1 (quiet hours)"), "{pass}");
    let show = env.ok(&["request", "show", &held]);
    assert!(show.contains("sending"), "{show}");
    assert!(
        show.contains("held: quiet hours until 07:00 Europe/Paris (06:00 UTC)"),
        "{show}"
    );
    let v: Value = serde_json::from_str(&env.ok(&["request", "show", &urgent, "--json"])).unwrap();
    assert_eq!(v["status"], "sent");
    env.ok(&["queue", "run", "--at", "2026-11-24T06:00:00Z"]);
    let v: Value = serde_json::from_str(&env.ok(&["request", "show", &held, "--json"])).unwrap();
    assert_eq!(
        (&v["status"], &v["recipients"][0]["retry_count"]),
        (&json!("sent"), &json!(0))
    );
}

#[test]
fn the_api_takes_quiet_hours_and_refuses_hostile_ones() {
    each_backend(at(NOW), |web| {
        let t = web.token("ops", Scope::Admin);
        let a = web.put(
            "/api/v1/users/ana",
            Some(&t),
            r#"{"tz":"Europe/Paris","quiet_hours":"22:00-07:00"}"#,
        );
        assert_eq!(a.status, 201, "{}", a.text);
        assert_eq!(a.json()["quiet_hours"], "22:00-07:00");
        let a = web.put(
            "/api/v1/groups/team",
            Some(&t),
            r#"{"quiet_hours":"23:00-06:00"}"#,
        );
        assert_eq!(a.status, 201, "{}", a.text);
        assert_eq!(a.json()["quiet_hours"], "23:00-06:00");
        let mut c = web.db.conn();
        let before = (
            parties::list_users(&mut c).unwrap(),
            parties::list_groups(&mut c).unwrap(),
        );
        for bad in HOSTILE {
            let body = json!({"daily_hour": 5, "quiet_hours": bad}).to_string();
            for path in ["/api/v1/users/ana", "/api/v1/groups/team"] {
                let a = web.put(path, Some(&t), body.clone());
                assert_eq!(a.status, 400, "{path} {bad:?}: {}", a.text);
                assert!(a.error().contains("invalid quiet hours"), "{}", a.text);
            }
            let bulk = json!([{"name": "eve", "tz": "UTC", "quiet_hours": bad}]).to_string();
            assert_eq!(web.post("/api/v1/users", Some(&t), bulk).status, 400);
        }
        let wrong = web.put("/api/v1/users/ana", Some(&t), r#"{"quiet_hours":22}"#);
        assert_eq!(wrong.status, 400);
        let after = (
            parties::list_users(&mut c).unwrap(),
            parties::list_groups(&mut c).unwrap(),
        );
        assert_eq!(after, before);
        // Cleared with "".
        let a = web.put("/api/v1/users/ana", Some(&t), r#"{"quiet_hours":""}"#);
        assert_eq!(
            (a.status, a.json()["quiet_hours"].clone()),
            (200, json!(""))
        );
    });
}

#[test]
fn the_manage_page_sets_quiet_hours_and_says_which_digests_still_go() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let path = format!("/s/{asha}");
        let page = web.get(&path, None).text;
        assert!(
            page.contains("id=\"quiet_hours\" name=\"quiet_hours\" value=\"\""),
            "{page}"
        );
        assert!(!page.contains("inside your quiet hours"));
        let token = csrf(&page);
        let a = post_form(
            web,
            &path,
            &[
                ("csrf", &token),
                ("action", "prefs"),
                ("quiet_hours", "17:30-09:30"),
            ],
        );
        assert_eq!(a.status, 303, "{}", a.text);
        assert_eq!(
            parties::get_user(&mut c, w.asha).unwrap().quiet_hours,
            "17:30-09:30"
        );
        let page = web.get(&path, None).text;
        assert!(page.contains("value=\"17:30-09:30\""));
        // asha's Calendar digest is daily at 09:00, her weekly one on
        // Mondays at 08:00 and her hostile collection's daily at 18:00, all
        // inside: the page says they still go.
        assert!(page.contains("Calendar: sent at 09:00, inside your quiet hours: digests are still sent; only notifications and hourly digests wait."), "{page}");
        assert!(page.contains("sent at 18:00, inside your quiet hours"));
        assert_eq!(page.matches("class=\"meta quiet-note\"").count(), 3);
        let before = snapshot(&mut c);
        let long = "x".repeat(10_000);
        for bad in HOSTILE.iter().copied().chain([long.as_str()]) {
            let a = post_form(
                web,
                &path,
                &[
                    ("csrf", &token),
                    ("action", "prefs"),
                    ("quiet_hours", bad),
                    ("daily_hour", "5"),
                ],
            );
            assert_eq!(a.status, 400, "{bad:.40}");
            assert!(a.text.contains("class=\"error\"") && a.text.contains("invalid quiet hours"));
            assert!(!a.text.contains("\r\nX-Evil"));
        }
        assert_eq!(snapshot(&mut c), before);
    });
}

/// Logs in at `/admin/login` with a new admin token: the session cookie.
fn admin_session(web: &Web) -> String {
    let secret = web.token("ops", Scope::Admin);
    let form = web.get("/admin/login", None);
    let a = post_form(
        web,
        "/admin/login",
        &[("csrf", &csrf(&form.text)), ("token", &secret)],
    );
    let v = a.header("set-cookie").expect("a session");
    v["digestd_admin=".len()..v.find(';').unwrap()].to_string()
}

#[test]
fn the_admin_request_page_shows_a_held_rows_reason() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        let r = crate::quiet_hours_change_web::quiet_asha_notified(&mut c);
        let dir = tempfile::tempdir().unwrap();
        let email = EmailConfig {
            dir: dir.path().display().to_string(),
            ..EmailConfig::default()
        };
        let mut d = Delivery::new(&email, crate::common::rt())
            .unwrap()
            .with_journal_dir(&dir.path().join("j"))
            .unwrap();
        queue::run_pass(&mut c, &mut d, at(NOW)).unwrap();
        let s = admin_session(web);
        let a = web.send(|cl| {
            cl.get(web.url(&format!("/admin/requests/{}", r.0)))
                .header("cookie", format!("digestd_admin={s}"))
        });
        assert_eq!(a.status, 200, "{}", a.text);
        // 01:30 in Madrid: quiet until 12:00 there, 11:00 UTC.
        let why = "held: quiet hours until 12:00 Europe/Madrid (11:00 UTC)";
        assert!(a.text.contains(why), "{}", a.text);
        assert!(a.text.contains("transient"));
    });
}
