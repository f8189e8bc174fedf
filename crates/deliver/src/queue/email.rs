//! The messages of a pass, on four threads so that none waits for another's
//! work: a builder makes the email messages a chunk at a time, a sender
//! hands each chunk to the email listener (the SMTP sessions, say), a
//! pusher sends what is not email by its listeners ([`super::pusher`]),
//! and the calling thread, which holds the database connection, claims the
//! next round and writes each chunk's outcomes in one transaction as they
//! come back.
//!
//! A message is settled only after its chunk came back from the listener,
//! but written in the journal ([`super::journal`]) the moment the far end
//! accepts it: a crash in between leaves its rows claimed, the journal is
//! replayed before they can be claimed again, and only the messages that
//! were on the wire (one per session) can go out twice (see
//! `docs/delivery.md`).

use std::sync::mpsc::{self, RecvTimeoutError, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::journal::Journal;
use super::pusher::{self, Push, Pushed};
use super::round::Round;
use super::settle::Settle;
use crate::error::Result;
use crate::listener::{Listener, Outgoing};
use crate::sink::Outcome;

/// Email messages per hand-over from the builder to the sender.
const EMAIL_CHUNK: usize = 256;

/// One email message to build: rows `range` of its round, to `address`;
/// its outcome is written as `settle` with the outcome filled in.
pub(super) struct EmailJob {
    pub range: (usize, usize),
    pub address: String,
    pub settle: Settle,
}

/// A round's email.
pub(super) struct EmailBatch {
    pub round: Arc<Round>,
    pub jobs: Vec<EmailJob>,
}

/// A round's messages: its email for the builder, the rest for the
/// pusher.
pub(super) struct Work {
    pub email: Option<EmailBatch>,
    pub pushes: Vec<Push>,
}

/// The calling thread's side: the next round's messages (after claiming
/// it and giving up what cannot be sent), and writing outcomes, with the
/// Matrix rooms (address, room id) the pushes opened.
pub(super) trait Source {
    fn next(&mut self) -> Result<Option<Work>>;
    fn write(&mut self, done: &[Settle], rooms: &[(String, String)]) -> Result<()>;
    /// Looks for requests cancelled since their rows were claimed, so the
    /// builder leaves them out; called whenever the thread is between two
    /// other things to do.
    fn watch(&mut self) -> Result<()>;
}

/// Builds one message of a round, with what to write back for it; `None`
/// when there is nothing left to send (its requests were cancelled).
pub(super) type Build<'a> =
    &'a (dyn Fn(&Round, &EmailJob) -> Result<Option<(Settle, Outgoing)>> + Sync);

/// Where the time went, per thread.
#[derive(Debug, Default)]
pub(super) struct Timings {
    pub built: Duration,
    pub sending: Duration,
    pub pushing: Duration,
    pub settled: Duration,
}

/// What comes back to the writing thread.
pub(super) enum Back {
    /// A chunk the listener took: each message's settle and outcome.
    Sent(Vec<Settle>, Vec<Outcome>),
    /// Messages the builder refused (a stored address it cannot use).
    Refused(Vec<Settle>),
    /// A chunk of pushes, sent.
    Pushed(Pushed),
}

/// Builds, sends and settles every round `source` gives until it has no
/// more: email by `email`, the rest by `others`. The first error
/// (claiming or writing) stops it: what was sent but not written stays
/// claimed.
pub(super) fn run(
    email: &mut dyn Listener,
    others: &mut [Box<dyn Listener>],
    journal: &Journal,
    build: Build<'_>,
    source: &mut dyn Source,
) -> Result<Timings> {
    let mut t = Timings::default();
    std::thread::scope(|scope| -> Result<()> {
        let (batch_tx, batch_rx) = mpsc::sync_channel::<EmailBatch>(1);
        let (job_tx, job_rx) = mpsc::sync_channel::<(Vec<Settle>, Vec<Outgoing>)>(1);
        let (push_tx, push_rx) = mpsc::sync_channel::<Vec<Push>>(1);
        let (back_tx, back_rx) = mpsc::channel::<Back>();
        let refused_tx = back_tx.clone();
        let pushed_tx = back_tx.clone();
        let builder = scope.spawn(move || build_all(build, batch_rx, job_tx, refused_tx));
        let sender = scope.spawn(move || send_all(email, journal, job_rx, back_tx));
        let pusher = scope.spawn(move || pusher::push_all(others, journal, push_rx, pushed_tx));
        let mut result = feed(source, batch_tx, push_tx, &back_rx, &mut t);
        // Until both threads are done; after an error, dropping the
        // receiver stops them after their chunk.
        while result.is_ok() {
            let first = match back_rx.recv_timeout(Duration::from_millis(10)) {
                Ok(b) => b,
                Err(RecvTimeoutError::Timeout) => {
                    result = source.watch();
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let mut backs = vec![first];
            backs.extend(back_rx.try_iter());
            result = write(source, backs, &mut t);
        }
        drop(back_rx);
        let joined = |h: std::thread::ScopedJoinHandle<'_, Duration>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        t.built = joined(builder);
        t.sending = joined(sender);
        t.pushing = joined(pusher);
        result
    })?;
    Ok(t)
}

/// The builder thread: each round's jobs built into messages, a chunk at a
/// time, for the sender; what it refuses goes straight back. Returns the
/// time it was busy.
fn build_all(
    build: Build<'_>,
    batches: mpsc::Receiver<EmailBatch>,
    jobs: mpsc::SyncSender<(Vec<Settle>, Vec<Outgoing>)>,
    refused: mpsc::Sender<Back>,
) -> Duration {
    let mut busy = Duration::ZERO;
    for batch in batches {
        for chunk in batch.jobs.chunks(EMAIL_CHUNK) {
            let start = Instant::now();
            let mut settles = Vec::with_capacity(chunk.len());
            let mut msgs = Vec::with_capacity(chunk.len());
            let mut bad = Vec::new();
            for job in chunk {
                match build(&batch.round, job) {
                    Ok(Some((settle, m))) => {
                        settles.push(settle);
                        msgs.push(m);
                    }
                    Ok(None) => {}
                    Err(e) => bad.push(Settle {
                        outcome: Outcome::permanent(None, e.to_string()),
                        ..job.settle.clone()
                    }),
                }
            }
            busy += start.elapsed();
            if !bad.is_empty() && refused.send(Back::Refused(bad)).is_err() {
                return busy;
            }
            if jobs.send((settles, msgs)).is_err() {
                return busy;
            }
        }
    }
    busy
}

/// The sender thread: each chunk through the listener, its outcomes sent
/// back. Returns the time it was busy.
fn send_all(
    email: &mut dyn Listener,
    journal: &Journal,
    jobs: mpsc::Receiver<(Vec<Settle>, Vec<Outgoing>)>,
    back: mpsc::Sender<Back>,
) -> Duration {
    let mut busy = Duration::ZERO;
    for (settles, msgs) in jobs {
        let start = Instant::now();
        // Each acceptance goes into the journal as the session reads it:
        // a crash before this chunk's outcomes are written re-sends only
        // what was on the wire.
        let outs = email
            .send_noting(&msgs, &|i, d| journal.note(&settles[i].keys, d))
            .into_iter()
            .map(Outcome::from)
            .collect();
        busy += start.elapsed();
        if back.send(Back::Sent(settles, outs)).is_err() {
            break;
        }
    }
    busy
}

/// Feeds rounds to the builder and the pusher until `source` has no more,
/// writing outcomes whenever they come back; while either is full, waits
/// on outcomes a little at a time (a round may give it nothing to send
/// back). Dropping `batches` and `pushes` at the end tells the threads
/// there is no more.
fn feed(
    source: &mut dyn Source,
    batches: mpsc::SyncSender<EmailBatch>,
    pushes: mpsc::SyncSender<Vec<Push>>,
    back: &mpsc::Receiver<Back>,
    t: &mut Timings,
) -> Result<()> {
    let mut waiting: Option<Work> = None;
    loop {
        write(source, drain(back, None), t)?;
        source.watch()?;
        let mut work = match waiting.take() {
            Some(w) => w,
            None => match source.next()? {
                Some(w) => w,
                None => return Ok(()),
            },
        };
        // A thread that is gone panicked: its panic comes out of the join.
        if let Some(b) = work.email.take() {
            match batches.try_send(b) {
                Ok(()) => {}
                Err(TrySendError::Full(b)) => work.email = Some(b),
                Err(TrySendError::Disconnected(_)) => return Ok(()),
            }
        }
        if !work.pushes.is_empty() {
            match pushes.try_send(std::mem::take(&mut work.pushes)) {
                Ok(()) => {}
                Err(TrySendError::Full(p)) => work.pushes = p,
                Err(TrySendError::Disconnected(_)) => return Ok(()),
            }
        }
        if work.email.is_some() || !work.pushes.is_empty() {
            waiting = Some(work);
            write(source, drain(back, Some(Duration::from_millis(5))), t)?;
        }
    }
}

/// Everything that has come back, waiting up to `wait` for the first
/// (not at all when `None`); empty when nothing came or the threads are
/// done. Taking all of it at once makes one transaction of several chunks
/// when the writes fall behind (PostgreSQL commits cost a WAL flush each).
fn drain(rx: &mpsc::Receiver<Back>, wait: Option<Duration>) -> Vec<Back> {
    let mut backs = Vec::new();
    if let Some(w) = wait {
        match rx.recv_timeout(w) {
            Ok(b) => backs.push(b),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return backs,
        }
    }
    backs.extend(rx.try_iter());
    backs
}

/// Writes what came back, in one transaction: each message's outcome
/// into its settle.
fn write(source: &mut dyn Source, backs: Vec<Back>, t: &mut Timings) -> Result<()> {
    if backs.is_empty() {
        return Ok(());
    }
    let start = Instant::now();
    let mut done: Vec<Settle> = Vec::new();
    let mut rooms = Vec::new();
    for back in backs {
        match back {
            Back::Sent(settles, outs) => done.extend(
                settles
                    .into_iter()
                    .zip(outs)
                    .map(|(s, outcome)| Settle { outcome, ..s }),
            ),
            Back::Refused(bad) => done.extend(bad),
            Back::Pushed(p) => {
                done.extend(p.settles);
                rooms.extend(p.rooms);
            }
        }
    }
    let r = source.write(&done, &rooms);
    t.settled += start.elapsed();
    r
}
