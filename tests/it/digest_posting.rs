//! Digests posted on each back end: the tick hands each due run to the real
//! [`Composer`], which posts an nt request in the tick's transaction; a
//! crash between compose and post loses and doubles nothing, the database
//! refuses a second digest for a period, and the outbox pass writes each
//! digest to disk once. Chunks, batches and compose workers are
//! `digest_posting_batches.rs`; the shared helpers are in
//! `common/digest.rs`.

use crate::common;

use chrono::{DateTime, Utc};
use common::digest::{calendar_week, calendar_world, composer, daily, requests, subscribe, user};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{nt_queue, nt_requests, subscription_runs};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::digest::Composer;
use digestd::ids::RequestId;
use digestd::parties;
use digestd::schedule::tick::tick;
use digestd::schedule::{DueRun, HandOff};
use digestd::subscriptions::SubscribeRequest;

/// Composes and posts, then fails as a crash would before the commit.
struct CrashAfterPost(Composer);

impl HandOff for CrashAfterPost {
    fn hand_off(&mut self, c: &mut DbConn, run: &DueRun) -> digestd::Result<Option<RequestId>> {
        let id = self.0.hand_off(c, run)?;
        assert!(id.is_some(), "the digest was posted before the crash");
        Err(digestd::Error::Storage(
            "simulated crash after posting".into(),
        ))
    }
}

/// Posts a chunk with the real composer, then fails the chunk once, as a
/// crash before the commit would; the same composer serves the retry.
struct FailOnce(Composer, bool);

impl HandOff for FailOnce {
    fn prepare(&mut self, c: &mut DbConn, runs: &[DueRun]) -> digestd::Result<()> {
        self.0.prepare(c, runs)
    }

    fn hand_off(&mut self, c: &mut DbConn, run: &DueRun) -> digestd::Result<Option<RequestId>> {
        self.0.hand_off(c, run)
    }

    fn hand_off_all(
        &mut self,
        c: &mut DbConn,
        runs: &[DueRun],
    ) -> digestd::Result<Vec<Option<RequestId>>> {
        let ids = self.0.hand_off_all(c, runs)?;
        if std::mem::take(&mut self.1) {
            return Err(digestd::Error::Storage("simulated crash".into()));
        }
        Ok(ids)
    }

    fn committed(&mut self) {
        self.0.committed()
    }
}

fn a_composer_after_a_failed_chunk_refers_to_nothing_it_rolled_back(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    // bea and cat read the same digest: one shared rendering.
    for name in ["bea", "cat"] {
        user(&mut c, name, "America/Los_Angeles", "en-US", None);
        subscribe(&mut c, daily(name, &cal));
    }
    calendar_week(&mut c, &cal);
    let mut h = FailOnce(composer(), true);
    assert!(tick(&mut c, at("2026-11-22T17:00:00Z"), &mut h).is_err());
    assert_eq!(requests(&mut c).len(), 0);
    // The same composer again: the rendering it stored went with the
    // failed chunk, so it stores it again.
    assert_eq!(
        tick(&mut c, at("2026-11-22T17:00:00Z"), &mut h)
            .unwrap()
            .len(),
        2
    );
    let b = common::digest::bodies(&mut c);
    assert_eq!(b.len(), 2);
    for x in &b {
        assert!(x.shared, "{x:?}");
        assert!(x.text.contains("Janitor's Pipe Dream"), "{x:?}");
    }
    let missing: i64 = digestd::db::schema::nt_messages::table
        .left_join(digestd::db::schema::nt_bodies::table)
        .filter(digestd::db::schema::nt_messages::body_id.is_not_null())
        .filter(digestd::db::schema::nt_bodies::body_id.nullable().is_null())
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(
        missing, 0,
        "a message points at a rendering that is not there"
    );
}

fn a_crash_between_compose_and_post_loses_nothing_and_doubles_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    subscribe(&mut c, daily("ann", &cal));
    calendar_week(&mut c, &cal);
    let crashed = tick(
        &mut c,
        at("2026-11-22T17:00:00Z"),
        &mut CrashAfterPost(composer()),
    );
    assert!(crashed.is_err());
    assert_eq!(
        requests(&mut c).len(),
        0,
        "the post rolled back with the run"
    );
    let recorded: i64 = subscription_runs::table.count().get_result(&mut c).unwrap();
    assert_eq!(recorded, 0);
    // The next tick (an hour late) delivers the same digest once.
    let mut comp = composer();
    assert_eq!(
        tick(&mut c, at("2026-11-22T18:00:00Z"), &mut comp)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        tick(&mut c, at("2026-11-22T19:00:00Z"), &mut comp)
            .unwrap()
            .len(),
        0
    );
    let reqs = requests(&mut c);
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0].heading(),
        "2 changes in Calendar since Saturday 4:00 PM"
    );
    assert_eq!(reqs[0].subject, "Daily digest: Calendar");
}

/// Checks the `.eml` at `p` is a valid digest of the calendar's week (CRLF
/// only, the headers a mail program threads and lists by, both parts);
/// whether it has an RFC 8058 one-click unsubscribe.
fn a_valid_digest(p: &std::path::Path) -> bool {
    let raw = std::fs::read(p).unwrap();
    assert!(
        !raw.windows(2).any(|w| w[1] == b'\n' && w[0] != b'\r'),
        "bare LF in {p:?}"
    );
    let m = mail_parser::MessageParser::default()
        .parse(&raw)
        .expect("parses");
    assert_eq!(m.subject(), Some("Daily digest: Calendar"));
    let first = m.body_text(0).unwrap().lines().next().unwrap().to_string();
    assert!(first.contains("in Calendar since"), "{first}");
    assert!(m.header_raw("In-Reply-To").is_some() && m.header_raw("List-Id").is_some());
    assert!(m.date().is_some() && m.message_id().is_some());
    assert_eq!(m.text_body_count(), 1);
    assert!(m
        .body_html(0)
        .unwrap()
        .contains("<strong>Janitor&#39;s Pipe Dream</strong>"));
    assert!(m
        .body_text(0)
        .unwrap()
        .contains("Janitor's Pipe Dream from"));
    m.header_raw("List-Unsubscribe-Post").is_some()
}

fn the_outbox_writes_valid_mime_once_and_settles_statuses(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    // A group of ann (email only) and a user with an SMS number.
    user(&mut c, "zoe", "Europe/Paris", "fr-FR", Some("+33612345678"));
    parties::create_group(&mut c, at("2026-11-01T00:00:00Z"), "team", None).unwrap();
    parties::add_member(&mut c, "team", "ann").unwrap();
    parties::add_member(&mut c, "team", "zoe").unwrap();
    subscribe(&mut c, daily("ann", &cal));
    subscribe(
        &mut c,
        SubscribeRequest {
            channels: vec!["email".into(), "sms".into()],
            hour: Some(18),
            ..daily("team", &cal)
        },
    );
    calendar_week(&mut c, &cal);
    let dir = tempfile::tempdir().unwrap();
    let email = EmailConfig {
        dir: dir.path().display().to_string(),
        ..EmailConfig::default()
    };
    let mut ob = Delivery::new(&email, crate::common::rt()).unwrap();
    // A group's hours are UTC: the team's 18:00 is 18:00Z; ann's 09:00 is 17:00Z.
    let mut t = at("2026-11-22T08:00:00Z");
    let mut comp = composer();
    while t <= at("2026-11-22T18:00:00Z") {
        tick(&mut c, t, &mut comp).unwrap();
        queue::run_pass(&mut c, &mut ob, t).unwrap();
        t += chrono::Duration::hours(1);
    }
    // A second pass finds nothing to do and writes nothing twice.
    let again = queue::run_pass(&mut c, &mut ob, t).unwrap();
    assert_eq!(
        (again.expanded, again.written.len(), again.finished),
        (0, 0, 0)
    );
    let mut emls: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    emls.sort();
    // ann's own digest, and the team's to ann and to zoe.
    assert_eq!(emls.len(), 3, "{emls:?}");
    let one_click = emls.iter().filter(|p| a_valid_digest(p)).count();
    // Every digest has an RFC 8058 one-click unsubscribe: a user's own,
    // and the group's, to each member with their own link.
    assert_eq!(one_click, 3);
    let sms_files: Vec<_> = std::fs::read_dir(dir.path().join("sms"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(sms_files.len(), 1, "only zoe has a number");
    // ann has no phone: her SMS row is given up, so the team's request is a
    // partial failure; ann's own (the first, at 17:00Z) is sent.
    let statuses: Vec<String> = nt_requests::table
        .select(nt_requests::status)
        .order(nt_requests::request_id.asc())
        .load(&mut c)
        .unwrap();
    assert_eq!(statuses, vec!["sent", "partial_failure"]);
    let gave_up: Vec<(String, Option<String>)> = nt_queue::table
        .filter(nt_queue::gave_up.eq(true))
        .select((nt_queue::channel, nt_queue::smtp_reply_message))
        .load(&mut c)
        .unwrap();
    assert_eq!(
        gave_up,
        vec![("sms".to_string(), Some("no sms address".to_string()))]
    );
}

fn times(c: &mut DbConn) -> Vec<DateTime<Utc>> {
    nt_requests::table
        .select(nt_requests::request_date)
        .load::<chrono::NaiveDateTime>(c)
        .unwrap()
        .into_iter()
        .map(|t| t.and_utc())
        .collect()
}

fn a_second_digest_for_the_same_period_is_refused_by_the_database(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    subscribe(&mut c, daily("ann", &cal));
    calendar_week(&mut c, &cal);
    tick(&mut c, at("2026-11-22T17:00:00Z"), &mut composer()).unwrap();
    assert_eq!(times(&mut c), vec![at("2026-11-22T17:00:00Z")]);
    // Copy the request as a buggy second poster would.
    let dup = diesel::sql_query(
        "INSERT INTO nt_requests (party_to, expand_group, party_from, subject, channels, \
         request_date, status, max_retries, kind, subscription_id, period) \
         SELECT party_to, expand_group, party_from, subject, channels, request_date, \
         status, max_retries, kind, subscription_id, period FROM nt_requests",
    )
    .execute(&mut c);
    assert!(
        dup.is_err(),
        "the unique (subscription, period) index holds"
    );
    assert_eq!(requests(&mut c).len(), 1);
}

backend_tests!(
    a_composer_after_a_failed_chunk_refers_to_nothing_it_rolled_back,
    a_crash_between_compose_and_post_loses_nothing_and_doubles_nothing,
    the_outbox_writes_valid_mime_once_and_settles_statuses,
    a_second_digest_for_the_same_period_is_refused_by_the_database,
);

/// On PostgreSQL digest bodies are compressed with lz4, not pglz
/// (migration `2026-12-01-000001_lz4_bodies`): every text column of
/// `nt_messages` and `nt_bodies`, and a body long enough to be compressed
/// is stored so.
#[test]
fn postgres_compresses_digest_bodies_with_lz4() {
    use diesel::sql_types::Text;
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let mut c = db.conn();
    #[derive(QueryableByName)]
    struct Col {
        #[diesel(sql_type = Text)]
        name: String,
        #[diesel(sql_type = Text)]
        method: String,
    }
    let cols: Vec<Col> = diesel::sql_query(
        "SELECT attrelid::regclass::text || '.' || attname AS name, attcompression::text AS method \
         FROM pg_attribute WHERE attrelid IN ('nt_messages'::regclass, 'nt_bodies'::regclass) \
         AND attname LIKE 'message%' ORDER BY 1",
    )
    .load(&mut c)
    .unwrap();
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), 8, "{names:?}");
    for c in &cols {
        assert_eq!(c.method, "l", "{} is not lz4", c.name);
    }
    #[derive(QueryableByName)]
    struct Method {
        #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
        method: Option<String>,
    }
    let html = "<p>a line of a digest that repeats</p>\n".repeat(200);
    // Read back from the table: what RETURNING gives is the value before
    // it was stored, never compressed.
    diesel::sql_query("INSERT INTO nt_bodies (message, message_html) VALUES ('', $1)")
        .bind::<Text, _>(&html)
        .execute(&mut c)
        .unwrap();
    let m: Method = diesel::sql_query(
        "SELECT pg_column_compression(message_html) AS method FROM nt_bodies \
         ORDER BY body_id DESC LIMIT 1",
    )
    .get_result(&mut c)
    .unwrap();
    assert_eq!(m.method.as_deref(), Some("lz4"));
}
