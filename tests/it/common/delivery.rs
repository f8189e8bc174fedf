//! Shared by the delivery tests (`delivery_*.rs`): users with an email
//! address, notifications posted at [`T0`], SMTP deliveries, and reading
//! back what a server received.

use super::at;
use digestd::config::EmailConfig;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery, NewNotification};
use digestd::ids::RequestId;
use digestd::parties::{self, NewUser};

pub const T0: &str = "2026-11-23T09:00:00Z";

pub fn user(c: &mut DbConn, name: &str, email: &str) {
    parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: "Europe/Paris".into(),
            email: Some(email.into()),
            ..Default::default()
        },
    )
    .unwrap();
}

pub fn notify(c: &mut DbConn, from: &str, to: &str, subject: &str) -> RequestId {
    notify_on(c, from, to, subject, &[])
}

/// [`notify`] on `channels` (none: email).
pub fn notify_on(
    c: &mut DbConn,
    from: &str,
    to: &str,
    subject: &str,
    channels: &[&str],
) -> RequestId {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &NewNotification {
            from: from.into(),
            to: to.into(),
            subject: subject.into(),
            message: format!("Body of {subject}.\nSecond line."),
            channels: channels.iter().map(|c| c.to_string()).collect(),
            ..Default::default()
        },
        at(T0),
    )
    .unwrap()
}

/// Passes delivering request `r` through a receiver scripted with
/// [`super::http::slow_then_failing`]: the 429's Retry-After of 900 s beats
/// the 5-minute backoff, the 500 backs off 10 minutes, the third attempt
/// is delivered.
pub fn retry_after_then_backoff(c: &mut DbConn, d: &mut Delivery, r: RequestId) {
    use chrono::Duration;
    queue::run_pass(c, d, at(T0)).unwrap();
    let v = queue::show(c, r).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1)
    );
    assert_eq!(v.recipients[0].reply_code, Some(429));
    assert_eq!(next_attempt(c, r), at(T0) + Duration::seconds(900));
    queue::run_pass(c, d, at(T0) + Duration::seconds(900)).unwrap();
    let v = queue::show(c, r).unwrap();
    assert_eq!(
        (v.recipients[0].retry_count, v.recipients[0].reply_code),
        (2, Some(500))
    );
    // No Retry-After: the backoff, 10 minutes after the second failure.
    assert_eq!(
        next_attempt(c, r),
        at(T0) + Duration::seconds(900) + Duration::minutes(10)
    );
    queue::run_pass(c, d, at(T0) + Duration::minutes(30)).unwrap();
    assert_eq!(queue::show(c, r).unwrap().status, "sent");
}

/// `v` failed at its first attempt with `code`, the reply saying `says`.
pub fn given_up_at_once(v: &queue::RequestView, code: i32, says: &str) {
    assert_eq!(v.status, "failed");
    let r = &v.recipients[0];
    assert_eq!(
        (r.gave_up, r.retry_count, r.reply_code),
        (true, 1, Some(code))
    );
    let text = r.reply_message.as_deref().unwrap();
    assert!(text.contains(says), "{text}");
}

/// When request `r`'s (first) queue row is next due.
pub fn next_attempt(c: &mut DbConn, r: RequestId) -> chrono::DateTime<chrono::Utc> {
    use diesel::prelude::*;
    use digestd::db::schema::nt_queue;
    nt_queue::table
        .filter(nt_queue::request_id.eq(r.0))
        .select(nt_queue::next_attempt_at)
        .first::<chrono::NaiveDateTime>(c)
        .unwrap()
        .and_utc()
}

/// A delivery writing its outbox and sent journal under a fresh
/// directory, and the `[email]` settings that name it.
pub fn in_fresh_dir() -> (Delivery, EmailConfig) {
    let dir = tempfile::tempdir().unwrap().keep();
    let email = EmailConfig {
        dir: dir.display().to_string(),
        ..EmailConfig::default()
    };
    let d = Delivery::new(&email, crate::common::rt())
        .unwrap()
        .with_journal_dir(&dir.join("journal"))
        .unwrap();
    (d, email)
}

/// A delivery whose webhook listeners (the webhook's and its presets')
/// follow `cfg`, writing under a fresh outbox.
pub fn webhook_with(cfg: digestd::config::WebhookConfig) -> Delivery {
    let (d, email) = in_fresh_dir();
    d.with_webhook(&cfg, &email).unwrap()
}

/// Whether the (one) contact point on `ch` is disabled.
pub fn disabled(c: &mut DbConn, ch: digestd::parties::Channel) -> bool {
    use diesel::prelude::*;
    use digestd::db::schema::contact_points;
    contact_points::table
        .filter(contact_points::channel.eq(ch.as_str()))
        .select(contact_points::disabled)
        .first(c)
        .unwrap()
}

/// [`webhook_with`] posting over plain http to loopback: the tests'
/// receivers.
pub fn webhook_loopback() -> Delivery {
    webhook_with(loopback_hooks())
}

/// `[webhook]` posting over plain http to loopback.
pub fn loopback_hooks() -> digestd::config::WebhookConfig {
    digestd::config::WebhookConfig {
        transport: digestd::config::WebhookTransport::Http,
        allow_http: true,
        allow_private: true,
        ..Default::default()
    }
}

/// A fresh directory with a config (SQLite `w.db`, `[webhook]` posting
/// over http to loopback), `init` run and the user `ana` added: the
/// webhook CLI tests' start. Returns the directory (kept while it lives)
/// and the config's path.
pub fn webhook_cli() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        "[database]\nurl = \"sqlite://w.db\"\n[webhook]\ntransport = \"http\"\nallow_http = true\nallow_private = true\n",
    )
    .unwrap();
    let run = |args: &[&str]| super::digestd_with_config(&cfg, args);
    assert!(run(&["init"]).status.success());
    assert!(run(&["user", "add", "ana", "--tz", "Europe/Madrid"])
        .status
        .success());
    (dir, cfg)
}

/// A delivery that writes into `dir` by the `dir` transport.
pub fn into_dir(dir: &std::path::Path) -> Delivery {
    Delivery::new(
        &EmailConfig {
            dir: dir.display().to_string(),
            ..EmailConfig::default()
        },
        crate::common::rt(),
    )
    .unwrap()
}

pub fn smtp(url: &str) -> Delivery {
    smtp_pool(url, EmailConfig::default().pool_size)
}

pub fn smtp_pool(url: &str, pool_size: u32) -> Delivery {
    let dir = tempfile::tempdir().unwrap().keep();
    Delivery::new(
        &EmailConfig {
            transport: digestd::config::EmailTransport::Smtp,
            smtp_url: url.into(),
            dir: dir.display().to_string(),
            pool_size,
            timeout_seconds: 5,
            ..EmailConfig::default()
        },
        crate::common::rt(),
    )
    .unwrap()
    // In the test's own directory: on PostgreSQL the default is
    // `data/journal/` under the working directory, the crate's.
    .with_journal_dir(&dir.join("journal"))
    .unwrap()
}

pub fn parse(data: &[u8]) -> mail_parser::Message<'_> {
    mail_parser::MessageParser::default()
        .parse(data)
        .expect("valid message")
}

/// The subject of the one message `to` received; fails unless exactly one.
pub fn one_message_to(got: &[super::smtp::Received], to: &str) -> String {
    let m: Vec<_> = got.iter().filter(|m| m.to == [to]).collect();
    assert_eq!(m.len(), 1, "one message to {to}");
    parse(&m[0].data).subject().unwrap().to_string()
}

/// Users p0, p1 … at `ok.p<i>@example.com`, each sent `subject(i)` by sys.
pub fn notified_users(c: &mut DbConn, n: usize, subject: impl Fn(usize) -> String) {
    for i in 0..n {
        user(c, &format!("p{i}"), &format!("ok.p{i}@example.com"));
        notify(c, "sys", &format!("p{i}"), &subject(i));
    }
}
