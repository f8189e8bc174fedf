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
    queue::post_request(
        c,
        &EmailConfig::default(),
        &NewNotification {
            from: from.into(),
            to: to.into(),
            subject: subject.into(),
            message: format!("Body of {subject}.\nSecond line."),
            ..Default::default()
        },
        at(T0),
    )
    .unwrap()
}

pub fn smtp(url: &str) -> Delivery {
    smtp_pool(url, EmailConfig::default().pool_size)
}

pub fn smtp_pool(url: &str, pool_size: u32) -> Delivery {
    let dir = tempfile::tempdir().unwrap().keep();
    Delivery::new(&EmailConfig {
        transport: digestd::config::EmailTransport::Smtp,
        smtp_url: url.into(),
        dir: dir.display().to_string(),
        pool_size,
        timeout_seconds: 5,
        ..EmailConfig::default()
    })
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
