//! Posting the operators' events (`events`) to `[events] url`: each as
//! `{"type", "timestamp", "data"}`, signed per Standard Webhooks with
//! `webhook-id: evt_<id>` (the same on every retry and replay), by the
//! queue pass that holds the queue lease, so one process posts.
//!
//! Events go in id order per order key (a subscription, or a party): one
//! that waits for a retry holds back the later ones of its key, not the
//! others. A 2xx answer is delivered; anything else (an error status, no
//! answer, a redirect, which is not followed) is retried after 30 s ×
//! 2^(attempts − 1), at most an hour or later when `Retry-After` asks,
//! until `[events] give_up_hours` after the event happened, when it is
//! given up (`failed`; `digestd events replay` posts it again). The first
//! failure ends the pass's posting: a receiver that is down costs one
//! timeout a pass, not one per event. Delivery is at least once: a crash
//! between the answer and its mark posts the event again, with the same
//! `webhook-id`.

use std::collections::HashSet;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::http::{self, Client, MAX_ANSWER};
use super::webhook::{retry_after, sign};
use crate::config::EventsConfig;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::validate::{self, UrlPolicy};
use digestd_engine::events::{self, Due};

/// Events taken per read, and posted per pass at most, so a pass that
/// finds a backlog goes back to the queue's own work in good time.
const BATCH: i64 = 500;
const PER_PASS: usize = 2_000;

/// Checks `[events]`: a URL (any host: the operator's own receiver) with
/// a Standard Webhooks secret, known types, and the limits.
pub fn check(cfg: &EventsConfig) -> Result<()> {
    events::check_types(cfg)?;
    if !(1..=600).contains(&cfg.timeout_seconds) {
        return Err(Error::invalid(
            "config: events.timeout_seconds must be 1-600",
        ));
    }
    if !(1..=8_760).contains(&cfg.give_up_hours) {
        return Err(Error::invalid(
            "config: events.give_up_hours must be 1-8760",
        ));
    }
    if cfg.url.is_empty() {
        return Ok(());
    }
    validate::webhook_url(&cfg.url, UrlPolicy::ANY)
        .map_err(|e| Error::invalid(format!("config: events.url: {e}")))?;
    crate::parties::webhook_secret_bytes(&cfg.secret).map_err(|e| {
        Error::invalid(format!(
            "config: events.secret: {e} (make one with `digestd events secret`)"
        ))
    })?;
    Ok(())
}

/// What a pass did with the events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Posted {
    pub sent: usize,
    pub retrying: usize,
    pub failed: usize,
    pub skipped: usize,
}

/// The poster of `[events]`, with its HTTP client kept between passes.
pub struct EventPoster {
    cfg: EventsConfig,
    client: Client,
}

impl EventPoster {
    /// The poster, posting on the runtime `rt`, or `None` when `[events]
    /// url` is empty.
    pub fn new(cfg: &EventsConfig, rt: &tokio::runtime::Handle) -> Result<Option<EventPoster>> {
        check(cfg)?;
        if !cfg.posts() {
            return Ok(None);
        }
        let timeout = Duration::from_secs(cfg.timeout_seconds);
        let client = Client::new(http::builder(timeout), rt)
            .map_err(|e| Error::Remote(format!("events: HTTP client: {e}")))?;
        Ok(Some(EventPoster {
            cfg: cfg.clone(),
            client,
        }))
    }

    /// Posts what is due at `now`, in order per key, until nothing is due,
    /// [`PER_PASS`] were posted, or one failed.
    pub(crate) fn post_due(&self, conn: &mut DbConn, now: DateTime<Utc>) -> Result<Posted> {
        let mut done = Posted::default();
        // Most passes find nothing: a read, no write.
        if events::due(conn, 0, 1)?.is_empty() {
            return Ok(done);
        }
        if !self.cfg.types.is_empty() {
            done.skipped = conn.write_tx(|c| events::skip_unwanted(c, &self.cfg.types))?;
        }
        let mut held: HashSet<String> = HashSet::new();
        let mut after = 0;
        loop {
            let batch: Vec<Due> = events::due(conn, after, BATCH)?;
            let Some(last) = batch.last() else { break };
            after = last.id;
            for e in &batch {
                if done.sent >= PER_PASS {
                    return Ok(done);
                }
                if !e.order_key.is_empty() && held.contains(&e.order_key) {
                    continue;
                }
                if e.next_attempt_at > now {
                    held.insert(e.order_key.clone());
                    continue;
                }
                match self.post(e, now) {
                    Ok(()) => {
                        conn.write_tx(|c| events::mark_sent(c, e.id, e.attempts + 1, now))?;
                        done.sent += 1;
                    }
                    Err((why, asked)) => {
                        self.failed(conn, e, &why, asked, now, &mut done)?;
                        return Ok(done);
                    }
                }
            }
            if (batch.len() as i64) < BATCH {
                break;
            }
        }
        Ok(done)
    }

    /// Event `e` failed with `why`: retried later, or given up when it is
    /// older than `[events] give_up_hours`.
    fn failed(
        &self,
        conn: &mut DbConn,
        e: &Due,
        why: &str,
        asked: Option<u64>,
        now: DateTime<Utc>,
        done: &mut Posted,
    ) -> Result<()> {
        let attempts = e.attempts + 1;
        let give_up = chrono::Duration::hours(i64::from(self.cfg.give_up_hours));
        tracing::warn!(event = e.id, kind = %e.kind, attempts, error = %why, "event not delivered");
        if now - e.occurred_at >= give_up {
            conn.write_tx(|c| events::mark_failed(c, e.id, attempts, why))?;
            done.failed += 1;
        } else {
            let asked = chrono::Duration::seconds(asked.unwrap_or(0).min(86_400) as i64);
            let wait = backoff(attempts).max(asked);
            conn.write_tx(|c| events::mark_retry(c, e.id, attempts, why, now, wait))?;
            done.retrying += 1;
        }
        Ok(())
    }

    /// Posts one event: `Err` with why and the `Retry-After` asked for.
    fn post(&self, e: &Due, now: DateTime<Utc>) -> std::result::Result<(), (String, Option<u64>)> {
        let body = events::envelope(&e.kind, e.occurred_at, &e.data);
        let id = format!("evt_{}", e.id);
        let headers = sign::headers(&id, now.timestamp(), &self.cfg.secret, body.as_bytes())
            .map_err(|err| (err.to_string(), None))?;
        let mut req = self.client.post(&self.cfg.url).body(body);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let resp = self.client.exchange(req, MAX_ANSWER).map_err(|err| {
            let err = err.without_url().to_string();
            (format!("events: {}", crate::text::one_line(&err)), None)
        })?;
        let status = resp.status;
        if (200..300).contains(&status) {
            return Ok(());
        }
        let asked = retry_after(&resp.headers, Some(now));
        let shown: String = crate::text::one_line(&resp.text)
            .chars()
            .take(300)
            .collect();
        Err((format!("events: {status} {shown}"), asked))
    }
}

/// The wait after `attempts` failed posts: 30 s × 2^(attempts − 1), at
/// most an hour.
fn backoff(attempts: i32) -> chrono::Duration {
    let exp = attempts.clamp(1, 20) - 1;
    chrono::Duration::seconds((30i64 << exp).min(3_600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_an_hour() {
        let secs: Vec<i64> = (1..=9).map(|a| backoff(a).num_seconds()).collect();
        assert_eq!(secs, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(backoff(i32::MAX).num_seconds(), 3600);
    }

    #[test]
    fn settings_are_checked() {
        let ok = EventsConfig {
            url: "http://10.0.0.7:8080/digestd".into(),
            secret: crate::parties::new_webhook_secret(),
            ..EventsConfig::default()
        };
        check(&ok).unwrap();
        check(&EventsConfig::default()).unwrap();
        for (bad, why) in [
            (
                EventsConfig {
                    secret: "nope".into(),
                    ..ok.clone()
                },
                "events.secret",
            ),
            (
                EventsConfig {
                    url: "ftp://x.example/".into(),
                    ..ok.clone()
                },
                "events.url",
            ),
            (
                EventsConfig {
                    url: "https://x.example/\r\nHost: y".into(),
                    ..ok.clone()
                },
                "events.url",
            ),
            (
                EventsConfig {
                    timeout_seconds: 0,
                    ..ok.clone()
                },
                "timeout_seconds",
            ),
            (
                EventsConfig {
                    give_up_hours: 0,
                    ..ok.clone()
                },
                "give_up_hours",
            ),
            (
                EventsConfig {
                    types: vec!["digest.sent".into()],
                    ..ok.clone()
                },
                "events.types",
            ),
        ] {
            let e = check(&bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
