//! The per-message events of a settle take each row's request kind and
//! subscription from the round that read them: a pass reads no request
//! again for its events (every statement it sends is watched through
//! diesel's instrumentation). A journal's replay, which has no round,
//! reads them, and its events say the same. On each back end.

use crate::common;

use std::sync::{Arc, Mutex};

use common::delivery::{user, T0};
use common::http::Gateway;
use common::{at, TestDb};
use diesel::connection::{Connection, Instrumentation, InstrumentationEvent};
use diesel::prelude::*;
use digestd::config::{EmailConfig, EventsConfig};
use digestd::db::schema::nt_queue;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::events::{self, EventRow};

/// The statements a connection sent, as text.
#[derive(Clone, Default)]
struct Statements(Arc<Mutex<Vec<String>>>);

impl Instrumentation for Statements {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let InstrumentationEvent::StartQuery { query, .. } = event {
            self.0.lock().unwrap().push(query.to_string());
        }
    }
}

impl Statements {
    fn watch(c: &mut DbConn) -> Statements {
        let s = Statements::default();
        match c {
            DbConn::Sqlite(lite) => lite.set_instrumentation(s.clone()),
            DbConn::Postgres(pg) => pg.set_instrumentation(s.clone()),
        }
        s
    }

    /// The statements that read a request's kind by diesel's column (the
    /// settle's read of requests for its events), quoted as PostgreSQL
    /// (`"`) or SQLite (`` ` ``) quotes it.
    fn reading_kinds(&self) -> Vec<String> {
        let all = self.0.lock().unwrap();
        all.iter()
            .filter(|q| q.replace('`', "\"").contains("\"nt_requests\".\"kind\""))
            .cloned()
            .collect()
    }

    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

/// Events for the per-message types, posted to `gw`.
fn posting(gw: &Gateway) -> EventsConfig {
    EventsConfig {
        url: gw.url(),
        secret: digestd::parties::new_webhook_secret(),
        types: vec!["digest.delivered".into(), "delivery.failed".into()],
        ..EventsConfig::default()
    }
}

fn per_message(c: &mut DbConn) -> Vec<EventRow> {
    events::list(c, None, None, 100)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind != "subscription.created")
        .collect()
}

fn a_pass_reads_no_request_again_for_its_events(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "ops", "ops@example.com");
    user(&mut c, "ana", "ana@example.com");
    common::one_change_digest(&mut c, "ana", "email", 8, "Night", "2026-11-23T07:00:00Z");
    // No SMS number: given up at once.
    let n = common::delivery::notify_on(&mut c, "ops", "ana", "Disk full", &["sms"]);
    let gw = Gateway::start(vec![]);
    let (d, _) = common::delivery::in_fresh_dir();
    let mut d = d.with_events(&posting(&gw)).unwrap();
    let watched = Statements::watch(&mut c);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert!(watched.count() > 10, "the statements are watched");
    let again = watched.reading_kinds();
    assert!(again.is_empty(), "{again:#?}");
    let mut got = per_message(&mut c);
    got.sort_by(|a, b| a.kind.cmp(&b.kind));
    let types: Vec<&str> = got.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(types, ["delivery.failed", "digest.delivered"], "{got:?}");
    let (failed, delivered) = (&got[0], &got[1]);
    assert!(delivered.data["subscription"].as_i64().unwrap() > 0);
    assert_eq!(delivered.data["channel"], "email");
    assert_eq!(failed.data["request"], n.0);
    assert_eq!(failed.data["kind"], "notification");
    assert_eq!(failed.data["channel"], "sms");
    assert_eq!(failed.data["party"], "ana");
    assert_eq!(failed.subscription, None, "{failed:?}");
}

fn a_replayed_row_reads_its_request_for_its_event(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "ops", "ops@example.com");
    user(&mut c, "ana", "ana@example.com");
    common::one_change_digest(&mut c, "ana", "email", 8, "Night", "2026-11-23T07:00:00Z");
    queue::expand(&mut c, at(T0)).unwrap();
    let (req, party): (i64, i64) = nt_queue::table
        .select((nt_queue::request_id, nt_queue::party_to))
        .first(&mut c)
        .unwrap();
    // Sent by a process that died before writing it (a journal the release
    // before left in the outbox: replayed first thing in the pass).
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("outbox");
    std::fs::create_dir_all(outbox.join("journal")).unwrap();
    let line =
        format!("{{\"code\":250,\"remote_id\":\"q\",\"rows\":[[{req},{party},\"email\"]]}}\n");
    std::fs::write(outbox.join("journal/4242-00000000000000ff.sent"), line).unwrap();
    let email = EmailConfig {
        dir: outbox.display().to_string(),
        ..EmailConfig::default()
    };
    let gw = Gateway::start(vec![]);
    let mut d = Delivery::new(&email, crate::common::rt())
        .unwrap()
        .with_journal_dir(&dir.path().join("journal"))
        .unwrap()
        .with_events(&posting(&gw))
        .unwrap();
    let watched = Statements::watch(&mut c);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(watched.reading_kinds().len(), 1, "the replay reads it");
    let got = per_message(&mut c);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].kind, "digest.delivered");
    assert_eq!(got[0].data["request"], req);
    assert!(got[0].data["subscription"].as_i64().unwrap() > 0);
}

backend_tests!(
    a_pass_reads_no_request_again_for_its_events,
    a_replayed_row_reads_its_request_for_its_event,
);
