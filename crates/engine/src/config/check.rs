//! The checks of the settings that need more than a type: ranges, URLs,
//! names. Each error starts `config: section.key`, which
//! [`super::Origins::place`] turns into a line naming where it was set.

use crate::error::{Error, Result};

use super::{Config, COMPOSE_WORKERS, TICK_CHUNKS};

impl Config {
    pub(super) fn check(&self) -> Result<()> {
        if let Err(e) = crate::db::DbUrl::parse(&self.database.url) {
            return Err(Error::invalid(format!("config: database.url: {e}")));
        }
        if self.database.pool_size == 0 || self.database.pool_size > 256 {
            return Err(Error::invalid("config: database.pool_size must be 1-256"));
        }
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&self.log.level) {
            return Err(Error::invalid(format!(
                "config: log.level {:?}: {e}",
                self.log.level
            )));
        }
        if let Err(e) = self.schedule.cron() {
            return Err(Error::invalid(format!("config: {e}")));
        }
        self.check_http()?;
        if !(1..=8760).contains(&self.signup.expiry_hours) {
            return Err(Error::invalid("config: signup.expiry_hours must be 1-8760"));
        }
        self.check_schedule()?;
        self.check_digest()?;
        self.ops.check()?;
        if self.queue.journal_dir.chars().any(char::is_control) {
            return Err(Error::invalid(
                "config: queue.journal_dir must be a path (or empty for the default)",
            ));
        }
        self.branding.check()?;
        self.i18n.check()?;
        self.check_record()
    }

    fn check_http(&self) -> Result<()> {
        if self.http.listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(Error::invalid(format!(
                "config: http.listen {:?} is not host:port (e.g. 127.0.0.1:8080)",
                self.http.listen
            )));
        }
        if let Err(e) = crate::validate::ip_nets(&self.http.trusted_proxies) {
            return Err(Error::invalid(format!("config: http.trusted_proxies: {e}")));
        }
        if self.http.max_body_bytes < 1024 {
            return Err(Error::invalid(
                "config: http.max_body_bytes must be at least 1024",
            ));
        }
        for (key, v) in [
            ("timeout_seconds", self.http.timeout_seconds),
            ("max_feed_days", u64::from(self.http.max_feed_days)),
        ] {
            if v == 0 {
                return Err(Error::invalid(format!(
                    "config: http.{key} must be at least 1"
                )));
            }
        }
        if !(1..=100_000).contains(&self.http.max_feed_entries) {
            return Err(Error::invalid(
                "config: http.max_feed_entries must be 1-100000",
            ));
        }
        if !(1..=720).contains(&self.http.admin_session_hours) {
            return Err(Error::invalid(
                "config: http.admin_session_hours must be 1-720",
            ));
        }
        self.http.check_limits()?;
        Ok(())
    }

    fn check_schedule(&self) -> Result<()> {
        if self.schedule.lease_seconds < 10 {
            return Err(Error::invalid(
                "config: schedule.lease_seconds must be at least 10",
            ));
        }
        if !(1..=86_400).contains(&self.schedule.queue_seconds) {
            return Err(Error::invalid(
                "config: schedule.queue_seconds must be 1-86400",
            ));
        }
        if !COMPOSE_WORKERS.contains(&self.schedule.compose_workers) {
            return Err(Error::invalid(format!(
                "config: schedule.compose_workers must be {}-{}",
                COMPOSE_WORKERS.start(),
                COMPOSE_WORKERS.end()
            )));
        }
        if !TICK_CHUNKS.contains(&self.schedule.tick_chunk) {
            return Err(Error::invalid(format!(
                "config: schedule.tick_chunk must be {}-{}",
                TICK_CHUNKS.start(),
                TICK_CHUNKS.end()
            )));
        }
        Ok(())
    }

    fn check_record(&self) -> Result<()> {
        if self.record.batch_size == 0 {
            return Err(Error::invalid(
                "config: record.batch_size must be at least 1",
            ));
        }
        if self.record.max_ahead_seconds > 86_400 {
            return Err(Error::invalid(
                "config: record.max_ahead_seconds must be 0 to 86400 (a day), e.g. 300",
            ));
        }
        if !(1..=3660).contains(&self.record.max_age_days) {
            return Err(Error::invalid(
                "config: record.max_age_days must be 1 to 3660, e.g. 30",
            ));
        }
        Ok(())
    }

    fn check_digest(&self) -> Result<()> {
        let d = &self.digest;
        if !(1..=10_000).contains(&d.max_items) {
            return Err(Error::invalid("config: digest.max_items must be 1-10000"));
        }
        if !(1..=10).contains(&d.sms_segments) {
            return Err(Error::invalid("config: digest.sms_segments must be 1-10"));
        }
        let u = &d.base_url;
        let scheme_ok = u.starts_with("http://") || u.starts_with("https://");
        if !scheme_ok
            || u.len() > 200
            || u.chars()
                .any(|c| c.is_control() || c.is_whitespace() || matches!(c, '<' | '>' | '"'))
        {
            return Err(Error::invalid(format!(
                "config: digest.base_url {u:?}: use an http:// or https:// URL without spaces"
            )));
        }
        Ok(())
    }
}
