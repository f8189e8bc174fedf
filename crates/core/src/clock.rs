//! Time is injected: the one place that reads the wall clock is
//! [`SystemClock`]. Everything else takes an instant or a `&dyn Clock`, so a
//! year of ticks can be simulated in seconds and tests pin time exactly.

use chrono::{DateTime, SubsecRound, Utc};
use std::sync::Mutex;

/// A source of "now".
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock, truncated to microseconds (what both databases keep).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now().trunc_subsecs(6)
    }
}

/// A clock that says what it is told; for tests and simulation.
#[derive(Debug)]
pub struct FixedClock(Mutex<DateTime<Utc>>);

impl FixedClock {
    pub fn new(at: DateTime<Utc>) -> Self {
        FixedClock(Mutex::new(at))
    }
    pub fn set(&self, at: DateTime<Utc>) {
        *self.0.lock().expect("clock lock") = at;
    }
    pub fn advance(&self, by: chrono::Duration) {
        let mut t = self.0.lock().expect("clock lock");
        *t += by;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().expect("clock lock")
    }
}
