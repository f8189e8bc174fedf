//! A subscription's frequency changed (`subscriptions::retime_in_tx`
//! through `manage::change_subscription`, `digestd subscription retime`)
//! on each back end: what was recorded before the change is sent once, by
//! the first digest of the new cadence, and nothing twice; a day's period
//! is never run twice, however often the cadence goes back and forth; bad
//! input is refused (exit 2) and writes nothing.

use digestd::db::DbConn;
use digestd::ids::SubscriptionId;
use digestd::manage;
use digestd::parties::{self, Channel, ContactChange};
use digestd::subscriptions::Retime;

use crate::common::{at, TestDb};
use crate::subscription_flush::{change, cli, digests, sent, subscribe, tick, world, written, T0};

fn retime(c: &mut DbConn, id: SubscriptionId, when: &str, r: Retime) {
    manage::change_subscription(c, at(when), id, None, &r).unwrap();
}

fn to(frequency: &str, hour: Option<i64>) -> Retime {
    Retime {
        frequency: Some(frequency.into()),
        hour,
        ..Retime::default()
    }
}

fn hourly_to_daily_loses_nothing_and_doubles_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "hourly", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T00:10:00Z");
    assert_eq!(tick(&mut c, "2026-11-22T01:00:00Z"), 1);
    change(&mut c, &rota, 2, "Beta", "2026-11-22T01:20:00Z");
    retime(&mut c, id, "2026-11-22T01:30:00Z", to("daily", Some(9)));
    change(&mut c, &rota, 3, "Gamma", "2026-11-22T02:10:00Z");
    for h in 2..=8 {
        let t = format!("2026-11-22T{h:02}:00:00Z");
        assert_eq!(tick(&mut c, &t), 0, "nothing due at {t}");
    }
    assert_eq!(tick(&mut c, "2026-11-22T09:00:00Z"), 1);
    let d = digests(&mut c);
    assert_eq!(d.len(), 2);
    assert_eq!(d[1].1, "2026-11-22");
    assert!(d[1].3.contains("event Beta,") && d[1].3.contains("event Gamma,"));
    assert!(d[1].3.starts_with("2 changes in Rota since"), "{}", d[1].3);
    for t in ["Alpha", "Beta", "Gamma"] {
        assert_eq!(sent(&mut c, t), 1, "{t}");
    }
}

fn daily_to_hourly_loses_nothing_and_doubles_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T02:00:00Z");
    assert_eq!(tick(&mut c, "2026-11-22T09:00:00Z"), 1);
    change(&mut c, &rota, 2, "Beta", "2026-11-22T09:40:00Z");
    retime(&mut c, id, "2026-11-22T10:30:00Z", to("hourly", None));
    let s = digestd::subscriptions::get(&mut c, id).unwrap();
    assert_eq!((s.hour_of_day, s.day_of_week), (None, None));
    assert_eq!(tick(&mut c, "2026-11-22T11:00:00Z"), 1);
    change(&mut c, &rota, 3, "Gamma", "2026-11-22T11:20:00Z");
    assert_eq!(tick(&mut c, "2026-11-22T12:00:00Z"), 1);
    let d = digests(&mut c);
    assert_eq!(d.len(), 3);
    assert!(d[1].3.contains("event Beta,") && !d[1].3.contains("Alpha"));
    assert!(d[2].3.contains("event Gamma,") && !d[2].3.contains("Beta"));
    for t in ["Alpha", "Beta", "Gamma"] {
        assert_eq!(sent(&mut c, t), 1, "{t}");
    }
}

/// Daily, hourly, daily again on one day: the day's daily digest went out
/// at 09:00, so the new 18:00 one is the next day's (no second run of the
/// day's period), and it holds everything since the last hourly one.
fn back_and_forth_in_one_day_runs_no_period_twice(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T02:00:00Z");
    assert_eq!(tick(&mut c, "2026-11-22T09:00:00Z"), 1);
    retime(&mut c, id, "2026-11-22T09:30:00Z", to("hourly", None));
    change(&mut c, &rota, 2, "Beta", "2026-11-22T09:40:00Z");
    assert_eq!(tick(&mut c, "2026-11-22T10:00:00Z"), 1);
    retime(&mut c, id, "2026-11-22T10:30:00Z", to("daily", Some(18)));
    change(&mut c, &rota, 3, "Gamma", "2026-11-22T11:00:00Z");
    assert_eq!(tick(&mut c, "2026-11-22T18:00:00Z"), 0);
    assert_eq!(tick(&mut c, "2026-11-23T18:00:00Z"), 1);
    // And weekly, then daily again: the next day's period, once.
    retime(
        &mut c,
        id,
        "2026-11-23T19:00:00Z",
        Retime {
            frequency: Some("weekly".into()),
            day: Some("wed".into()),
            ..Retime::default()
        },
    );
    change(&mut c, &rota, 4, "Delta", "2026-11-23T20:00:00Z");
    retime(&mut c, id, "2026-11-23T21:00:00Z", to("daily", None));
    assert_eq!(tick(&mut c, "2026-11-24T18:00:00Z"), 1);
    let d = digests(&mut c);
    let periods: Vec<&str> = d.iter().map(|x| x.1.as_str()).collect();
    assert_eq!(
        periods,
        [
            "2026-11-22",
            "2026-11-22T10:00+00:00",
            "2026-11-23",
            "2026-11-24"
        ]
    );
    for t in ["Alpha", "Beta", "Gamma", "Delta"] {
        assert_eq!(sent(&mut c, t), 1, "{t}");
    }
}

/// Changes refused as bad input: (subscription, change, what the one-line
/// error says); `twin` is an hourly subscription of the same party.
fn hostile_retimes(
    id: SubscriptionId,
    twin: SubscriptionId,
) -> Vec<(SubscriptionId, Retime, &'static str)> {
    fn r(f: Option<&str>, h: Option<i64>, d: Option<&str>, ch: Option<&[&str]>) -> Retime {
        Retime {
            frequency: f.map(String::from),
            hour: h,
            day: d.map(String::from),
            channels: ch.map(|l| l.iter().map(|s| s.to_string()).collect()),
        }
    }
    vec![
        (
            id,
            r(Some("fortnightly"), None, None, None),
            "invalid frequency",
        ),
        (
            id,
            r(Some("daily\r\nX-Evil: 1"), None, None, None),
            "invalid frequency",
        ),
        (id, r(Some(""), None, None, None), "invalid frequency"),
        (id, r(None, Some(24), None, None), "hour"),
        (id, r(None, Some(-1), None, None), "hour"),
        (id, r(Some("weekly"), None, Some("Funday"), None), ""),
        (id, r(Some("weekly"), None, None, None), "needs a day"),
        (
            id,
            r(Some("hourly"), Some(9), None, None),
            "neither hour nor day",
        ),
        (id, r(None, None, Some("mon"), None), "hour, not day"),
        (twin, r(Some("daily"), None, None, None), "needs an hour"),
        (id, r(None, None, None, Some(&["xmpp"])), "no xmpp address"),
        (id, r(None, None, None, Some(&["sms"])), "no sms address"),
        (id, r(None, None, None, Some(&["fax"])), ""),
        // Spaces around a channel's name are dropped (as `subscribe` does);
        // inside it, a line break is no channel.
        (
            id,
            r(None, None, None, Some(&["email\r\nsms"])),
            "unknown channel",
        ),
        (
            twin,
            r(Some("daily"), Some(9), None, None),
            "already has that digest",
        ),
        (
            SubscriptionId(999_999),
            r(Some("daily"), None, None, None),
            "no subscription",
        ),
    ]
}

/// Bad frequencies, hours, days and channels, CR/LF, an unknown id, a
/// twin: refused through the library and the command line, nothing
/// written.
fn hostile_input_writes_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    let twin = subscribe(&mut c, "hourly", &rota, false);
    parties::change_contact(&mut c, at(T0), "ann", Channel::Sms, &ContactChange::Disable).unwrap();
    let before = written(&mut c);
    let cases = hostile_retimes(id, twin);
    for (sub, retime, needle) in cases {
        let Err(e) = manage::change_subscription(&mut c, at(T0), sub, None, &retime) else {
            panic!("{sub} {retime:?} accepted");
        };
        assert!(e.is_bad_input(), "{retime:?}: {e}");
        let msg = e.to_string();
        assert!(msg.contains(needle), "{retime:?}: {msg}");
        assert!(!msg.contains('\n') && !msg.contains('\r'), "{msg:?}");
    }
    assert_eq!(written(&mut c), before);
    // The same through the command line: exit 2, one line, nothing written.
    let run = |args: &[&str]| cli(db, args);
    let sid = id.0.to_string();
    for bad in [
        vec!["--frequency", "fortnightly"],
        vec!["--frequency", "daily\r\nX"],
        vec!["--hour", "24"],
        vec!["--frequency", "weekly", "--day", "Funday"],
        vec!["--channel", "xmpp"],
        vec!["--channel", "sms"],
        vec![],
    ] {
        let mut args = vec!["subscription", "retime", sid.as_str()];
        args.extend(&bad);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let out = run(&["subscription", "retime", "999999", "--hour", "7"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(written(&mut c), before);
    let out = run(&[
        "subscription",
        "retime",
        &sid,
        "--frequency",
        "weekly",
        "--day",
        "tue",
        "--hour",
        "7",
    ]);
    assert!(out.status.success(), "{out:?}");
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.contains("weekly modification, tue 07:00 local, via email"),
        "{line}"
    );
}

crate::backend_tests!(
    hourly_to_daily_loses_nothing_and_doubles_nothing,
    daily_to_hourly_loses_nothing_and_doubles_nothing,
    back_and_forth_in_one_day_runs_no_period_twice,
    hostile_input_writes_nothing,
);
