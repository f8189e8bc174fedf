//! The pass's pusher thread: the messages of every channel but email (XMPP,
//! SMS, webhooks, the presets, Matrix), sent by their listeners while the
//! calling thread claims and reads the next round and writes outcomes, as
//! email's sender does ([`super::email`]). Posting a round's webhooks on
//! the calling thread made a pass take its database work plus its posts,
//! one after the other.
//!
//! A round's pushes come in order and go out in order, a chunk at a time,
//! each chunk's outcomes (and the Matrix rooms opened for it) sent back to
//! be written in one transaction. As with email, each acceptance goes into
//! the journal the moment the far end gives it, so a crash before the
//! outcome is written sends nothing twice that the journal knows of.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::email::Back;
use super::journal::{Journal, RowKey};
use super::settle::Settle;
use crate::listener::{Listener, Outgoing};
use crate::parties::Channel;
use crate::sink::Outcome;

/// Messages per hand-back: a round of thousands of webhooks has its first
/// outcomes written while the rest are posted.
const PUSH_CHUNK: usize = 256;

/// One message for a listener other than email's, and what to write back
/// for it (its outcome filled in once sent).
pub(super) struct Push {
    pub ch: Channel,
    pub settle: Settle,
    pub msg: Outgoing,
}

/// A chunk's settles with their outcomes, and the Matrix rooms its
/// messages opened, by (address, room id).
pub(super) struct Pushed {
    pub settles: Vec<Settle>,
    pub rooms: Vec<(String, String)>,
}

/// The pusher thread: each round's pushes sent a chunk at a time, each
/// chunk's outcomes sent back. Returns the time it was busy.
pub(super) fn push_all(
    listeners: &mut [Box<dyn Listener>],
    journal: &Journal,
    rounds: mpsc::Receiver<Vec<Push>>,
    back: mpsc::Sender<Back>,
) -> Duration {
    let mut busy = Duration::ZERO;
    for pushes in rounds {
        let mut pushes = pushes.into_iter().peekable();
        while pushes.peek().is_some() {
            let chunk: Vec<Push> = pushes.by_ref().take(PUSH_CHUNK).collect();
            let start = Instant::now();
            let done = send_chunk(listeners, journal, chunk);
            busy += start.elapsed();
            if back.send(Back::Pushed(done)).is_err() {
                return busy;
            }
        }
    }
    busy
}

/// Sends `chunk` by the listeners, a batch per channel (one XMPP session,
/// one ping for all of them). A message whose channel has no listener
/// keeps its settle's outcome ("not sent", retried).
fn send_chunk(listeners: &mut [Box<dyn Listener>], journal: &Journal, chunk: Vec<Push>) -> Pushed {
    let (mut settles, mut msgs): (Vec<Settle>, Vec<Option<(Channel, Outgoing)>>) = chunk
        .into_iter()
        .map(|p| (p.settle, Some((p.ch, p.msg))))
        .unzip();
    let mut rooms = Vec::new();
    for l in listeners.iter_mut() {
        let ch = l.key();
        let idx: Vec<usize> = (0..msgs.len())
            .filter(|&i| matches!(&msgs[i], Some((c, _)) if *c == ch))
            .collect();
        if idx.is_empty() {
            continue;
        }
        let mine: Vec<Outgoing> = idx
            .iter()
            .filter_map(|&i| msgs[i].take().map(|(_, m)| m))
            .collect();
        let keys: Vec<&[RowKey]> = idx.iter().map(|&i| &settles[i].keys[..]).collect();
        let sent = l.send_noting(&mine, &|i, d| journal.note(keys[i], d));
        for (&i, r) in idx.iter().zip(sent) {
            settles[i].outcome = Outcome::from(r);
        }
        rooms.extend(l.opened_rooms());
    }
    Pushed { settles, rooms }
}
