//! A subscription's email digests form one thread in a mail reader, on
//! each back end: thirty daily digests of one subscription and thirty of
//! another, ticked day by day with the injected clock and sent through
//! the queue to Postfix's `smtp-sink`, are threaded by an independent
//! reader (`tests/fixtures/threads/jwz.py`: Python's `email` package and
//! Zawinski's algorithm, as mail readers thread). Each subscription is one
//! thread under its root, the two are two, and a subscription's subjects
//! are all the same (Gmail threads only messages whose subject is). The
//! second collection's name holds quotes, angle brackets and non-ASCII,
//! and comes back whole from its `List-Id`.

use crate::common;

use common::digest::{calendar_world, composer, daily, item, put, subscribe};
use common::smtp::Sink;
use common::{at, TestDb};
use digestd::deliver::queue;
use digestd::items;
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;

const DAYS: i64 = 30;
const TASKS: &str = "Tasks \"Ops\" <on call> — Zoë";

/// One message as the fixture threads it.
#[derive(Debug)]
struct Threaded {
    id: String,
    subject: String,
    list_id: String,
}

/// The fixture's threads of every message in `dir`: each thread's root
/// and its messages.
fn threads(dir: &std::path::Path) -> Vec<(Option<String>, Vec<Threaded>)> {
    let files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .collect();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/threads/jwz.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .args(&files)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    doc["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let ms = t["messages"].as_array().unwrap();
            let ms = ms
                .iter()
                .map(|m| Threaded {
                    id: s(&m["id"]),
                    subject: s(&m["subject"]),
                    list_id: s(&m["list_id"]),
                })
                .collect();
            (t["root"].as_str().map(String::from), ms)
        })
        .collect()
}

fn thirty_daily_digests_are_one_thread_and_two_subscriptions_two(db: &TestDb) {
    let Some(sink) = Sink::start() else { return };
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    let created = at("2026-11-01T00:00:00Z");
    let tasks = items::create_collection(&mut c, created, TASKS, None)
        .unwrap()
        .uuid;
    // ann (Los Angeles) at 09:00 and 10:00: 17:00Z and 18:00Z, so the two
    // never wait in the queue together.
    let every_day = |coll: &str, hour| SubscribeRequest {
        send_empty: true,
        hour: Some(hour),
        ..daily("ann", coll)
    };
    subscribe(&mut c, every_day(&cal, 9));
    subscribe(&mut c, every_day(&tasks, 10));
    let mut d = common::delivery::smtp(&format!("smtp://127.0.0.1:{}", sink.port));
    let mut comp = composer();
    let day0 = at("2026-11-22T00:00:00Z");
    for day in 0..DAYS {
        let midnight = day0 + chrono::Duration::days(day);
        // Changes on some days, none on others: what a digest holds (and
        // its first line) changes, its subject does not.
        if day % 3 == 0 {
            let when = (midnight + chrono::Duration::hours(12)).to_rfc3339();
            let start = (midnight + chrono::Duration::days(2)).to_rfc3339();
            put(
                &mut c,
                &item(
                    100 + day as u128,
                    &cal,
                    &format!("Shift {day}"),
                    &start,
                    "gr24",
                    &when,
                ),
            );
        }
        for hour in [17, 18] {
            let t = midnight + chrono::Duration::hours(hour);
            tick(&mut c, t, &mut comp).unwrap();
            queue::run_pass(&mut c, &mut d, t).unwrap();
        }
    }
    let threads = threads(sink.dir.path());
    let sizes: Vec<usize> = threads.iter().map(|(_, ms)| ms.len()).collect();
    assert_eq!(sizes, vec![DAYS as usize; 2], "{threads:#?}");
    for (coll, subject) in [
        (&cal, "Daily digest: Calendar".to_string()),
        (&tasks, format!("Daily digest: {TASKS}")),
    ] {
        let (root, ms) = threads
            .iter()
            .find(|(_, ms)| ms[0].subject == subject)
            .unwrap_or_else(|| panic!("no thread of {subject:?}: {threads:#?}"));
        // The root was never sent: the reader made an empty container.
        let root = root.as_deref().expect("an empty root");
        assert!(
            root.starts_with("nt.thread.") && ms.iter().all(|m| m.id != root),
            "{root}"
        );
        assert!(ms.iter().all(|m| m.subject == subject), "{ms:#?}");
        let list = format!("<{coll}.lists.localhost>");
        assert!(ms.iter().all(|m| m.list_id.ends_with(&list)), "{ms:#?}");
        let mut ids: Vec<&str> = ms.iter().map(|m| m.id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), DAYS as usize, "one message a day");
    }
    assert_ne!(threads[0].0, threads[1].0);
    // The hostile name comes back whole from List-Id, on one line.
    let (_, ms) = threads
        .iter()
        .find(|(_, ms)| ms[0].subject.contains("Tasks"))
        .unwrap();
    assert!(
        ms[0].list_id.contains("Zoë") && ms[0].list_id.contains("<on call>"),
        "{:?}",
        ms[0].list_id
    );
}

backend_tests!(thirty_daily_digests_are_one_thread_and_two_subscriptions_two);
