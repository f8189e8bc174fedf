//! The email leg of a round, on three threads so that none waits for
//! another's work: a builder makes the messages a chunk at a time, a sender
//! hands each chunk to the email listener (the SMTP sessions, say), and the
//! calling thread, which holds the database connection, writes each chunk's
//! outcomes in one transaction as they come back.
//!
//! A message is settled only after its chunk came back from the listener:
//! a crash in between leaves its rows claimed, and they go out again when
//! the claim expires (at least once; see `docs/delivery.md`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::settle::Settle;
use crate::deliver::listener::{Listener, Outgoing};
use crate::deliver::sink::Outcome;
use crate::error::Result;

/// Email messages per hand-over from the builder to the sender.
const EMAIL_CHUNK: usize = 256;

/// One email message to build: rows `range` of the round, to `address`;
/// its outcome goes to `settles[settle]`.
pub(super) struct EmailJob {
    pub range: (usize, usize),
    pub address: String,
    pub settle: usize,
}

/// Where the leg's time went, per thread.
#[derive(Debug, Default)]
pub(super) struct Timings {
    pub built: Duration,
    pub sending: Duration,
    pub settled: Duration,
}

/// What comes back to the writing thread.
enum Back {
    /// A chunk the listener took: each message's settle index and outcome.
    Sent(Vec<usize>, Vec<Outcome>),
    /// Messages the builder refused (a stored address it cannot use).
    Refused(Vec<Settle>),
}

/// Builds, sends and settles every job; `write` stores a slice of outcomes
/// (one transaction). The first write error stops the leg: what was sent
/// but not written stays claimed.
pub(super) fn deliver(
    email: &mut dyn Listener,
    build: &(dyn Fn(&EmailJob) -> Result<Outgoing> + Sync),
    jobs: &[EmailJob],
    settles: &[Settle],
    write: &mut dyn FnMut(&[Settle]) -> Result<()>,
) -> Result<Timings> {
    let mut t = Timings::default();
    std::thread::scope(|scope| -> Result<()> {
        let (job_tx, job_rx) = mpsc::sync_channel::<(Vec<usize>, Vec<Outgoing>)>(1);
        let (back_tx, back_rx) = mpsc::channel::<Back>();
        let refused_tx = back_tx.clone();
        let builder = scope.spawn(move || {
            let mut busy = Duration::ZERO;
            for chunk in jobs.chunks(EMAIL_CHUNK) {
                let start = Instant::now();
                let mut idx = Vec::with_capacity(chunk.len());
                let mut msgs = Vec::with_capacity(chunk.len());
                let mut bad = Vec::new();
                for job in chunk {
                    match build(job) {
                        Ok(m) => {
                            idx.push(job.settle);
                            msgs.push(m);
                        }
                        Err(e) => bad.push(Settle {
                            outcome: Outcome::permanent(None, e.to_string()),
                            ..settles[job.settle].clone()
                        }),
                    }
                }
                busy += start.elapsed();
                if !bad.is_empty() && refused_tx.send(Back::Refused(bad)).is_err() {
                    break;
                }
                if job_tx.send((idx, msgs)).is_err() {
                    break;
                }
            }
            busy
        });
        let sender = scope.spawn(move || {
            let mut busy = Duration::ZERO;
            for (idx, msgs) in job_rx {
                let start = Instant::now();
                let outs = email.send(&msgs).into_iter().map(Outcome::from).collect();
                busy += start.elapsed();
                if back_tx.send(Back::Sent(idx, outs)).is_err() {
                    break;
                }
            }
            busy
        });
        let mut result = Ok(());
        // Ends when both threads are done (or on the first write error,
        // which closes the channel and stops them after their chunk).
        for back in back_rx {
            let start = Instant::now();
            let done: Vec<Settle> = match back {
                Back::Sent(idx, outs) => idx
                    .iter()
                    .zip(outs)
                    .map(|(&k, o)| Settle {
                        outcome: o,
                        ..settles[k].clone()
                    })
                    .collect(),
                Back::Refused(bad) => bad,
            };
            result = write(&done);
            t.settled += start.elapsed();
            if result.is_err() {
                break;
            }
        }
        let joined = |h: std::thread::ScopedJoinHandle<'_, Duration>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        t.built = joined(builder);
        t.sending = joined(sender);
        result
    })?;
    Ok(t)
}
