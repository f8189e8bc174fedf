//! When the operator's daily report is posted, on each back end: once per
//! local day in `[ops] report_tz` (repeated ticks, two connections, a DST
//! day, not before `report_hour`, not at all without `report_to`), sent by
//! the queue as the system party, and by the daemon's tick in the same
//! call. Its numbers are `report.rs`.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use digestd::config::{Config, OpsConfig};
use digestd::db::schema::{delivery_log, nt_queue, nt_requests};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::report;

use crate::common::delivery::into_dir;
use crate::common::{at, TestDb};
use crate::report::reports;

fn dir_delivery() -> Delivery {
    into_dir(&tempfile::tempdir().unwrap().keep())
}

fn ops(to: &str, hour: u32, tz: &str) -> Config {
    Config {
        ops: OpsConfig {
            report_to: to.into(),
            report_hour: hour,
            report_tz: tz.into(),
        },
        ..Config::default()
    }
}

fn posted_once_per_local_day(db: &TestDb) {
    let cfg = ops("ops@example.com", 7, "Europe/Paris");
    let mut c = db.conn();
    let mut other = db.conn();
    // 07:00 in Paris is 06:00Z.
    assert_eq!(
        report::post_if_due(&mut c, &cfg, at("2026-11-23T05:59:59Z")).unwrap(),
        None
    );
    let first = report::post_if_due(&mut c, &cfg, at("2026-11-23T06:00:00Z"))
        .unwrap()
        .expect("due at 07:00 local");
    for t in [
        "2026-11-23T06:00:00Z",
        "2026-11-23T07:00:00Z",
        "2026-11-23T22:59:59Z",
    ] {
        assert_eq!(
            report::post_if_due(&mut c, &cfg, at(t)).unwrap(),
            None,
            "{t}"
        );
        assert_eq!(
            report::post_if_due(&mut other, &cfg, at(t)).unwrap(),
            None,
            "{t}"
        );
    }
    // 23:00Z is midnight in Paris: the 24th, before its hour.
    assert_eq!(
        report::post_if_due(&mut c, &cfg, at("2026-11-23T23:00:00Z")).unwrap(),
        None
    );
    let second = report::post_if_due(&mut other, &cfg, at("2026-11-24T06:30:00Z"))
        .unwrap()
        .expect("the next day's");
    assert_eq!(
        reports(&mut c),
        vec![
            ("2026-11-23".to_string(), first.0),
            ("2026-11-24".to_string(), second.0)
        ]
    );
    // The queue sends it to the address, as the system party.
    let pass = queue::run_pass(&mut c, &mut dir_delivery(), at("2026-11-24T06:31:00Z")).unwrap();
    assert_eq!(pass.finished, 2);
    let sent: Vec<(Option<String>, bool)> = nt_queue::table
        .select((nt_queue::address, nt_queue::is_successful))
        .load(&mut c)
        .unwrap();
    assert_eq!(sent, vec![(Some("ops@example.com".to_string()), true); 2]);
    let status: Vec<String> = nt_requests::table
        .select(nt_requests::status)
        .load(&mut c)
        .unwrap();
    assert_eq!(status, ["sent", "sent"]);
    let logged: i64 = delivery_log::table
        .filter(delivery_log::outcome.eq("sent"))
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(logged, 2);
}

/// Two connections race for the same day's report: one posts it.
fn two_connections_post_one(db: &TestDb) {
    let cfg = ops("ops@example.com", 0, "UTC");
    let conns: Vec<DbConn> = (0..2).map(|_| db.conn()).collect();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let handles: Vec<_> = conns
        .into_iter()
        .map(|mut c| {
            let (cfg, barrier) = (cfg.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                report::post_if_due(&mut c, &cfg, at("2026-11-23T12:00:00Z")).unwrap()
            })
        })
        .collect();
    let posted: Vec<_> = handles
        .into_iter()
        .filter_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(posted.len(), 1);
    let mut c = db.conn();
    assert_eq!(
        reports(&mut c),
        vec![("2026-11-23".to_string(), posted[0].0)]
    );
    let requests: i64 = nt_requests::table.count().get_result(&mut c).unwrap();
    assert_eq!(requests, 1);
}

fn not_posted_without_report_to(db: &TestDb) {
    let mut c = db.conn();
    let cfg = Config::default();
    assert_eq!(cfg.ops.report_to, "");
    for h in 0..24 {
        let t = at("2026-11-23T00:00:00Z") + Duration::hours(h);
        assert_eq!(report::post_if_due(&mut c, &cfg, t).unwrap(), None);
    }
    assert!(reports(&mut c).is_empty());
    let requests: i64 = nt_requests::table.count().get_result(&mut c).unwrap();
    assert_eq!(requests, 0);
}

/// 2026-11-01 in New York has 01:00 twice (EDT, then EST at 06:00Z): the
/// report at 01:00 is posted by the first tick at 01:00 only; the next day
/// has its own.
fn dst_day_posts_once(db: &TestDb) {
    let cfg = ops("ops@example.com", 1, "America/New_York");
    let mut c = db.conn();
    let mut posted: Vec<DateTime<Utc>> = Vec::new();
    // From midnight local (04:00Z, EDT) to 02:00 local the next day.
    let start = at("2026-11-01T04:00:00Z");
    for q in 0..(27 * 4) {
        let t = start + Duration::minutes(15 * q);
        if report::post_if_due(&mut c, &cfg, t).unwrap().is_some() {
            posted.push(t);
        }
    }
    assert_eq!(
        posted,
        vec![at("2026-11-01T05:00:00Z"), at("2026-11-02T06:00:00Z")]
    );
    let dates: Vec<String> = reports(&mut c).into_iter().map(|r| r.0).collect();
    assert_eq!(dates, ["2026-11-01", "2026-11-02"]);
}

/// The daemon's tick (`cycle::tick_and_deliver`) posts the report when due
/// and its queue pass sends it in the same call; later ticks that day post
/// nothing.
fn the_daemon_posts_and_sends_it(db: &TestDb) {
    let mut cfg = ops("ops@example.com", 7, "UTC");
    cfg.database.url = db.url.clone();
    let pool = digestd::db::Db::open(&db.url, 2).unwrap();
    let m = digestd::metrics::Metrics::new();
    let mut d = dir_delivery();
    for t in [
        "2026-11-23T06:00:00Z",
        "2026-11-23T07:00:00Z",
        "2026-11-23T08:00:00Z",
    ] {
        digestd::cycle::tick_and_deliver(&pool, &cfg, &mut d, "daemon", at(t), &m).unwrap();
    }
    let mut c = db.conn();
    let rows = reports(&mut c);
    assert_eq!(rows.len(), 1);
    let sent: Vec<(Option<String>, bool)> = nt_queue::table
        .select((nt_queue::address, nt_queue::is_successful))
        .load(&mut c)
        .unwrap();
    assert_eq!(sent, vec![(Some("ops@example.com".to_string()), true)]);
    let date: chrono::NaiveDateTime = nt_requests::table
        .find(rows[0].1)
        .select(nt_requests::request_date)
        .first(&mut c)
        .unwrap();
    assert_eq!(date.and_utc(), at("2026-11-23T07:00:00Z"));
}

backend_tests!(
    posted_once_per_local_day,
    two_connections_post_one,
    not_posted_without_report_to,
    dst_day_posts_once,
    the_daemon_posts_and_sends_it,
);
