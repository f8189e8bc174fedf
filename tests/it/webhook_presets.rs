//! The webhook listener's presets (Slack, Discord, Teams, ntfy) against
//! real HTTP servers on loopback playing each service, through the real
//! queue, on each back end: each gets a digest and a notification in its
//! own format and headers, within its limits, with the webhook's answers
//! (429 with Retry-After retried, 410 disables); the CLI refuses a URL
//! the policy does not allow in one line.

use crate::common;

use chrono::Duration;
use common::delivery::T0;
use common::http::{Gateway, Request};
use common::{at, TestDb};
use digestd::config::{EmailConfig, WebhookConfig};
use digestd::db::DbConn;
use digestd::deliver::queue;
use digestd::ids::RequestId;
use digestd::parties::{self, Channel};
use digestd::validate::UrlPolicy;
use serde_json::Value;

/// `ops` and `ana`; ana's contact point on each preset is `url(channel)`.
fn world(c: &mut DbConn, url: impl Fn(Channel) -> String) {
    for name in ["ops", "ana"] {
        common::delivery::user(c, name, &format!("{name}@example.com"));
    }
    for ch in Channel::PRESETS {
        let now = at("2026-11-01T00:00:00Z");
        let p = parties::set_preset(c, now, "ana", ch, &url(ch), UrlPolicy::ANY).unwrap();
        assert_eq!(p.channel, ch.as_str());
    }
}

fn notify(c: &mut DbConn, subject: &str, message: &str, ch: Channel) -> RequestId {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &queue::NewNotification {
            from: "ops".into(),
            to: "ana".into(),
            subject: subject.into(),
            message: message.into(),
            channels: vec![ch.as_str().into()],
            ..Default::default()
        },
        at(T0),
    )
    .unwrap()
}

use common::delivery::{webhook_loopback as delivery, webhook_with as delivery_with};

fn json(q: &Request) -> Value {
    assert_eq!(q.header("content-type"), Some("application/json"));
    serde_json::from_str(&q.body).unwrap()
}

/// Every request's common ground: a POST, no signature, digestd's agent.
fn plain_post(q: &Request) {
    assert_eq!((q.method.as_str(), q.path.as_str()), ("POST", "/send"));
    assert!(q.header("user-agent").unwrap().starts_with("digestd/"));
    assert_eq!(q.header("webhook-signature"), None);
}

/// An RFC 2047 header value as an independent decoder (Python's `email`)
/// reads it.
fn decoded(v: &str) -> String {
    let script = "import sys\nfrom email.header import decode_header, make_header\n\
                  print(str(make_header(decode_header(sys.argv[1]))), end='')";
    let out = std::process::Command::new("python3")
        .args(["-c", script, v])
        .output()
        .expect("python3");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

use common::delivery::disabled;

fn a_digest_reaches_each_preset_in_its_format(db: &TestDb) {
    let mut c = db.conn();
    let gws: Vec<(Channel, Gateway)> = Channel::PRESETS
        .into_iter()
        .map(|ch| (ch, Gateway::start(vec![])))
        .collect();
    let gw = |ch: Channel| &gws.iter().find(|g| g.0 == ch).unwrap().1;
    world(&mut c, |ch| gw(ch).url());
    let mut d = delivery();
    common::one_change_digest(
        &mut c,
        "ana",
        "slack,discord,teams,ntfy",
        8,
        "Guardia <!channel> @everyone & *noche*",
        "2026-11-23T07:00:00Z",
    );
    queue::run_pass(&mut c, &mut d, at("2026-11-23T07:00:00Z")).unwrap();
    for (_, g) in &gws {
        assert_eq!(g.requests().len(), 1);
        plain_post(&g.requests()[0]);
    }
    let slack = json(&gw(Channel::Slack).requests()[0]);
    assert_eq!(slack["blocks"][0]["type"], "header");
    let section = slack["blocks"][1]["text"]["text"].as_str().unwrap();
    assert!(
        section.contains("&lt;!channel&gt;") && !section.contains("<!channel>"),
        "{section}"
    );
    let discord = json(&gw(Channel::Discord).requests()[0]);
    assert_eq!(discord["allowed_mentions"]["parse"], serde_json::json!([]));
    let desc = discord["embeds"][0]["description"].as_str().unwrap();
    assert!(
        desc.contains("\\@everyone") && desc.contains("\\*noche\\*"),
        "{desc}"
    );
    let teams = json(&gw(Channel::Teams).requests()[0]);
    assert_eq!(teams["type"], "message");
    let card = &teams["attachments"][0];
    assert_eq!(
        card["contentType"],
        "application/vnd.microsoft.card.adaptive"
    );
    assert_eq!(card["content"]["type"], "AdaptiveCard");
    assert_eq!(card["content"]["version"], "1.4");
    let actions = card["content"]["actions"].as_array().unwrap();
    assert!(actions
        .iter()
        .any(|a| a["url"].as_str().unwrap().contains("/s/")));
    let ntfy = &gw(Channel::Ntfy).requests()[0];
    assert_eq!(ntfy.header("markdown"), Some("yes"));
    assert!(ntfy.header("title").unwrap().is_ascii());
    assert!(ntfy.header("click").unwrap().starts_with("http"));
    assert!(ntfy.body.contains("Guardia") && ntfy.body.len() <= 4096);
}

fn a_long_notification_keeps_within_each_limit(db: &TestDb) {
    let mut c = db.conn();
    let gw = Gateway::start(vec![]);
    world(&mut c, |_| gw.url());
    let mut d = delivery();
    let message: String = (0..500)
        .map(|i| format!("Línea {i} ✓ {}\n", "x".repeat(70)))
        .collect();
    for (k, ch) in Channel::PRESETS.into_iter().enumerate() {
        let r = notify(&mut c, "Informe nocturno ✓ ünïcödé", &message, ch);
        queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(k as i64)).unwrap();
        assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    }
    let reqs = gw.requests();
    assert_eq!(reqs.len(), 4);
    let chars = |v: &Value| v.as_str().map_or(0, |s| s.chars().count());
    let ends_more = |s: &str| {
        let last = s.lines().last().unwrap();
        assert!(
            last.starts_with("… and ") && last.ends_with(" more"),
            "{last}"
        );
    };
    let slack = json(&reqs[0]);
    let blocks = slack["blocks"].as_array().unwrap();
    assert!(blocks.len() <= 50 && chars(&blocks[0]["text"]["text"]) <= 150);
    assert!(blocks[1..]
        .iter()
        .all(|b| chars(&b["text"]["text"]) <= 3000));
    ends_more(blocks.last().unwrap()["text"]["text"].as_str().unwrap());
    let discord = json(&reqs[1]);
    let embeds = discord["embeds"].as_array().unwrap();
    let total: usize = embeds
        .iter()
        .map(|e| chars(&e["title"]) + chars(&e["description"]))
        .sum();
    assert!(embeds.len() <= 10 && total <= 6000 && chars(&discord["content"]) <= 2000);
    ends_more(embeds.last().unwrap()["description"].as_str().unwrap());
    assert!(reqs[2].body.len() <= 28_000);
    let teams = json(&reqs[2]);
    let body = teams["attachments"][0]["content"]["body"]
        .as_array()
        .unwrap();
    ends_more(body.last().unwrap()["text"].as_str().unwrap());
    let ntfy = &reqs[3];
    assert!(ntfy.body.len() <= 4096);
    ends_more(&ntfy.body);
    let title = ntfy.header("title").unwrap();
    assert!(title.starts_with("=?UTF-8?B?"), "{title}");
    assert_eq!(decoded(title), "Informe nocturno ✓ ünïcödé");
    assert!(ntfy
        .header("content-type")
        .unwrap()
        .starts_with("text/markdown"));
}

fn a_429_is_retried_and_a_410_disables(db: &TestDb) {
    let mut c = db.conn();
    let slow = Gateway::start(common::http::slow_then_failing());
    let gone = Gateway::start(vec![(410, vec![], "gone".into())]);
    world(&mut c, |ch| match ch {
        Channel::Discord => gone.url(),
        _ => slow.url(),
    });
    let mut d = delivery();
    let r = notify(&mut c, "Queue depth high", "Body.", Channel::Slack);
    common::delivery::retry_after_then_backoff(&mut c, &mut d, r);
    assert_eq!(slow.requests().len(), 3);
    let r = notify(&mut c, "Gone", "Body.", Channel::Discord);
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].reply_code),
        ("failed", Some(410))
    );
    assert!(disabled(&mut c, Channel::Discord));
    assert!(!disabled(&mut c, Channel::Slack));
}

fn the_dir_transport_writes_each_channels_http_file(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c, |ch| {
        format!("https://hooks.example.com/{}/T0/secret", ch.as_str())
    });
    let mut d = delivery_with(WebhookConfig::default());
    for ch in Channel::PRESETS {
        notify(&mut c, "To the outbox", "Body.", ch);
    }
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    for ch in Channel::PRESETS {
        let dir = d.outbox.root().join(ch.as_str());
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "{ch:?}");
        let text = std::fs::read_to_string(files[0].path()).unwrap();
        let want = format!("POST https://hooks.example.com/{}/T0/secret\n", ch.as_str());
        assert!(text.starts_with(&want), "{text}");
        assert!(text.contains("\nuser-agent: digestd/"), "{text}");
    }
}

#[test]
fn the_cli_sets_a_preset_masks_it_and_refuses_what_the_policy_does_not_allow() {
    let gw = Gateway::start(vec![]);
    let (_dir, cfg) = common::delivery::webhook_cli();
    let run = |args: &[&str]| common::digestd_with_config(&cfg, args);
    let out = run(&["contact", "ana", "--channel", "slack", "--set", &gw.url()]);
    assert!(out.status.success(), "{out:?}");
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.contains("slack http://127.0.0.1:") && shown.contains("/***"),
        "{shown}"
    );
    assert!(!shown.contains("/send"), "{shown}");
    let ok = run(&["test-alert", "--channel", "slack", "--to", "ana"]);
    assert!(ok.status.success(), "{ok:?}");
    assert!(!String::from_utf8_lossy(&ok.stdout).contains("/send"));
    let q = &gw.requests()[0];
    assert_eq!(json(q)["blocks"][0]["text"]["text"], "digestd test alert");
    // Refused with the default policy: one line, exit 2.
    std::fs::write(&cfg, "[database]\nurl = \"sqlite://w.db\"\n").unwrap();
    for url in [
        "https://user:pass@hooks.slack.com/services/T0/B0/x",
        "https://127.0.0.1/services/T0/B0/x",
        "https://10.0.0.5/services/x",
    ] {
        let out = run(&["contact", "ana", "--channel", "slack", "--set", url]);
        assert_eq!(out.status.code(), Some(2), "{url}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // The generic setter does not pass the policy by.
    let out = run(&[
        "contact",
        "ana",
        "--channel",
        "ntfy",
        "--secret",
        "x",
        "--set",
        "https://ntfy.sh/t",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

backend_tests!(
    a_digest_reaches_each_preset_in_its_format,
    a_long_notification_keeps_within_each_limit,
    a_429_is_retried_and_a_410_disables,
    the_dir_transport_writes_each_channels_http_file,
);
