//! The [`Composer`] as the tick's [`HandOff`]: each due run becomes a
//! post, and a batch of posts is written in a few statements
//! ([`store::write`]) inside the tick's transaction.
//!
//! What a digest stores is what its request's channels read, and no more:
//! - recipients of the same shared content in the same style (the body the
//!   composer builds once) share one stored rendering of the email text and
//!   HTML and the XMPP text (`nt_bodies`), with holes where each
//!   recipient's links go ([`render::render_shared`]); the request keeps
//!   only its links, and its SMS text, whose fitting depends on the length
//!   of its link. The queue fills the holes as it sends ([`render::fill`]);
//! - a digest of content no one else reads (its recipient's own changes
//!   left out, or the only reader of its content and style in its chunk so
//!   far, where a row of `nt_bodies` and its id would cost more than they
//!   save) is rendered for its recipient alone and stored in its
//!   `nt_messages` row, as a notification's body is.
//!
//! A chunk is handed off [`POST_BATCH`] runs at a time, and a rendering's
//! readers are counted in the batch being planned: one read twice there,
//! or stored already, is shared. A content and style read once in a batch
//! is shared too when an earlier batch of the chunk read it (rendered
//! alone there: that reader is gone, the later ones share), or when it is
//! a list the chunk's seen marks give to two or more recipients
//! ([`super::seen::SeenMarks::spread`]: its first reader's is stored).
//! Readers of the same rendering are spread over the batches when they
//! are few among many (seen marks that leave out the same items), so
//! counting in the batch alone would render each of them alone.
//!
//! Either way only the renderings the channels read are made: an email
//! digest has no chat or SMS text, an XMPP one no HTML. `message` is NOT
//! NULL and is the email's text part: a digest that goes out on no email
//! stores it empty (delivery reads it only for email, and as the XMPP
//! fallback of a request without a chat text, which a digest on XMPP always
//! has).
//!
//! A stored rendering's id is good once the transaction that wrote it has
//! committed, or inside it: [`HandOff::prepare`] (once per chunk, each
//! chunk its own transaction) forgets them unless the chunk before was
//! committed ([`HandOff::committed`]).

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::post::{BodyKey, Composer};
use super::render::{self, Parts, Rendered};
use super::store::{self, Bodies, BodyRef, Post};
use super::workers::{finish_beside, Job, Planned, RunLinks, Source};
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::{PartyId, RequestId};
use crate::schedule::{DueRun, HandOff};

/// Digests composed before their posts are written: enough for a few
/// multi-row statements, few enough that their bodies take little memory.
pub(super) const POST_BATCH: usize = 500;

/// Renderings rendered alone that a chunk remembers at most, to share
/// with a later batch's reader ([`Composer::alone`]): one per content and
/// style rendered alone, so no more than a chunk's runs (the tick's
/// chunks hold 20,000); 8 bytes each, under 1 MiB in all. Past it no more
/// are remembered, and their later readers are rendered alone as before.
const ALONE_MAX: usize = 65_536;

/// A shared body's stored rendering: the body, the renderings made (email,
/// chat) and whether its recipients have an unsubscribe link.
pub(super) type StoredKey = (BodyKey, bool, bool, bool);

/// What [`Composer::draft_all`] found: posts, and bytes they would store.
#[derive(Debug, Default, Clone, Copy)]
pub struct Drafted {
    pub posts: usize,
    pub bytes: usize,
    /// How long the first batch took to plan: it reads and collapses the
    /// windows of most of the chunk, on as many connections as there are
    /// workers when the composer reads through a pool, else on this
    /// thread alone.
    pub first_plan: std::time::Duration,
}

/// The key `p`'s rendering would be shared under, its body built or not;
/// `None` when it has none: its content is its recipient's alone, or
/// empty and not sent.
fn share_key(p: &Planned, run: &DueRun) -> Option<StoredKey> {
    let (Source::Ready(content), Some(key)) = (&p.source, p.key) else {
        return None;
    };
    if content.is_empty() && !run.send_empty {
        return None;
    }
    let parts = Parts::for_channels(&run.channels);
    Some((key, parts.email, parts.chat, p.unsubscribes()))
}

/// The key `p`'s shared rendering is stored under, or `None` when it has
/// none ([`share_key`], or its body is its own).
fn stored_key(p: &Planned, run: &DueRun) -> Option<StoredKey> {
    p.body.as_ref().and(share_key(p, run))
}

/// What [`Composer::alone`] remembers of a key: a hash (a collision only
/// shares a rendering that one recipient reads).
fn hash_of(k: &StoredKey) -> u64 {
    let mut h = DefaultHasher::new();
    k.hash(&mut h);
    h.finish()
}

impl Composer {
    /// `batch`'s runs planned on this thread, ready for the workers: every
    /// database read done, the bodies read twice or more built, the shared
    /// renderings made (into `new_bodies`).
    fn jobs_of<'r>(
        &mut self,
        c: &mut DbConn,
        batch: &'r [DueRun],
        new_bodies: &mut Vec<Rendered>,
    ) -> Result<Vec<Job<'r>>> {
        let t0 = std::time::Instant::now();
        // Names are forgotten between batches only: the workers read them.
        self.trim_names();
        self.load_system(c)?;
        self.preload_names(c, batch)?;
        let read = t0.elapsed();
        let mut planned = Vec::with_capacity(batch.len());
        for run in batch {
            planned.push(self.plan_unbuilt(c, run)?);
        }
        // A rendering is shared when it has two readers: a key read once in
        // the batch, not stored already, not read in an earlier batch of
        // the chunk and not a list the chunk's marks give to others, is
        // rendered for its recipient alone, as a row of `nt_bodies` would
        // cost more than it saves.
        let keys: Vec<Option<StoredKey>> = planned
            .iter()
            .zip(batch)
            .map(|(p, r)| share_key(p, r))
            .collect();
        let mut readers: HashMap<StoredKey, usize> = HashMap::new();
        for k in keys.iter().flatten() {
            *readers.entry(*k).or_default() += 1;
        }
        let share: Vec<bool> = planned
            .iter()
            .zip(&keys)
            .map(|(p, k)| {
                k.is_some_and(|k| {
                    readers[&k] >= 2
                        || self.stored.contains_key(&k)
                        || self.alone.contains(&hash_of(&k))
                        || self.seen.spread(&p.source)
                })
            })
            .collect();
        // A body is built here, on the tick's thread, only when it is kept
        // for others: built already, read twice or more in the batch, or
        // its rendering shared. A body with one reader is built by a
        // worker, with its rendering.
        let mut body_readers: HashMap<BodyKey, usize> = HashMap::new();
        for k in planned.iter().filter_map(|p| p.key) {
            *body_readers.entry(k).or_default() += 1;
        }
        for ((p, run), shared) in planned.iter_mut().zip(batch).zip(&share) {
            let read_twice = p.key.and_then(|k| body_readers.get(&k)).copied() >= Some(2);
            self.settle_body(c, run, p, *shared || read_twice)?;
        }
        let mut jobs = Vec::with_capacity(batch.len());
        for ((planned, run), (key, share)) in
            planned.into_iter().zip(batch).zip(keys.iter().zip(share))
        {
            let parts = Parts::for_channels(&run.channels);
            let shared = self.shared_rendering(&planned, run, share, new_bodies)?;
            // Rendered alone: a later batch's reader of the same key shares.
            if let (None, Some(k)) = (shared, key) {
                if self.alone.len() < ALONE_MAX {
                    self.alone.insert(hash_of(k));
                }
            }
            jobs.push(Job {
                run,
                planned,
                shared,
                parts,
            });
        }
        tracing::debug!(read = ?read, planned = ?t0.elapsed(), runs = batch.len(), "digest batch");
        Ok(jobs)
    }

    /// The shared rendering `p` points at: stored already, or made now (in
    /// the batch's order) for the first reader of a key to `share`;
    /// `None` when its body is its own.
    fn shared_rendering(
        &mut self,
        p: &Planned,
        run: &DueRun,
        share: bool,
        new_bodies: &mut Vec<Rendered>,
    ) -> Result<Option<BodyRef>> {
        let (Some(k), Some(body)) = (stored_key(p, run), &p.body) else {
            return Ok(None);
        };
        Ok(match self.stored.get(&k) {
            Some(b) => Some(*b),
            None if !share => None,
            // A body holding the hole mark itself is not shared (none
            // should: input validation refuses control characters).
            None if body.has_holes() => None,
            None => {
                // Holes where the links go: the links themselves are not read.
                let frame = p.frame(run, &self.cfg, RunLinks::default());
                let parts = Parts::for_channels(&run.channels);
                new_bodies.push(render::render_shared(
                    body,
                    &frame,
                    parts,
                    p.unsubscribes(),
                )?);
                let b = BodyRef::New(new_bodies.len() - 1);
                self.stored.insert(k, b);
                Some(b)
            }
        })
    }

    /// The hand-off of `runs` without its writes: every digest composed and
    /// rendered as [`HandOff::hand_off_all`] would post it, shared
    /// renderings made once, nothing written (`digestd bench compose`).
    /// The batches are pipelined as [`HandOff::hand_off_all`] does, on
    /// [`Composer::workers`] threads in all, this one among them.
    pub fn draft_all(&mut self, c: &mut DbConn, runs: &[DueRun]) -> Result<Drafted> {
        self.prepare(c, runs)?;
        let mut d = Drafted::default();
        let mut next_id = -1;
        let batches: Vec<&[DueRun]> = runs.chunks(self.post_batch.max(1)).collect();
        let Some(first) = batches.first() else {
            return Ok(d);
        };
        let t0 = std::time::Instant::now();
        let mut jobs = self.draft_batch(c, first, &mut d, &mut next_id)?;
        d.first_plan = t0.elapsed();
        for n in 0..batches.len() {
            let env = self.env();
            let (done, next) = finish_beside(&env, &jobs, self.workers.max(1) - 1, || {
                batches
                    .get(n + 1)
                    .map(|b| self.draft_batch(c, b, &mut d, &mut next_id))
                    .transpose()
            });
            for p in self.tally(&jobs, done)?.into_iter().flatten() {
                d.posts += 1;
                d.bytes += p.bytes();
            }
            match next? {
                Some(j) => jobs = j,
                None => break,
            }
        }
        Ok(d)
    }

    /// `batch` planned, its shared renderings counted in `d` as if written
    /// (under ids below `next_id`: later batches of the chunk refer to them).
    fn draft_batch<'r>(
        &mut self,
        c: &mut DbConn,
        batch: &'r [DueRun],
        d: &mut Drafted,
        next_id: &mut i64,
    ) -> Result<Vec<Job<'r>>> {
        let mut new_bodies = Vec::new();
        let jobs = self.jobs_of(c, batch, &mut new_bodies)?;
        d.bytes += new_bodies.iter().map(Rendered::bytes).sum::<usize>();
        let ids: Vec<i64> = new_bodies
            .iter()
            .map(|_| {
                *next_id -= 1;
                *next_id
            })
            .collect();
        self.settle_bodies(&ids);
        Ok(jobs)
    }

    /// `batch` planned and its shared renderings written, ready for the
    /// workers: their ids are known before any post names them.
    fn post_batch<'r>(&mut self, c: &mut DbConn, batch: &'r [DueRun]) -> Result<Vec<Job<'r>>> {
        let mut new_bodies = Vec::new();
        let mut jobs = self.jobs_of(c, batch, &mut new_bodies)?;
        let body_ids = store::write_bodies(c, &new_bodies)?;
        self.settle_bodies(&body_ids);
        for j in &mut jobs {
            if let Some(BodyRef::New(i)) = j.shared {
                j.shared = Some(BodyRef::Stored(body_ids[i]));
            }
        }
        Ok(jobs)
    }

    /// The bodies made for the last batch are stored as `ids`.
    fn settle_bodies(&mut self, ids: &[i64]) {
        for b in self.stored.values_mut() {
            if let BodyRef::New(i) = *b {
                *b = BodyRef::Stored(ids[i]);
            }
        }
    }
}

impl HandOff for Composer {
    fn prepare(&mut self, c: &mut DbConn, runs: &[DueRun]) -> Result<()> {
        // A new chunk, a new transaction: renderings stored by the chunk
        // before are there only if it committed.
        if !self.chunk_committed {
            self.stored.clear();
        }
        self.chunk_committed = false;
        self.alone.clear();
        self.trim_recipients();
        self.excluders = Some(super::window::excluders(runs));
        self.seen.begin_chunk(runs);
        let parties_: Vec<PartyId> = runs.iter().map(|r| r.party).collect();
        self.load_recipients(c, &parties_)
    }

    fn committed(&mut self) {
        self.chunk_committed = true;
    }

    fn hand_off(&mut self, c: &mut DbConn, run: &DueRun) -> Result<Option<RequestId>> {
        Ok(self
            .hand_off_all(c, std::slice::from_ref(run))?
            .pop()
            .flatten())
    }

    /// Composes [`POST_BATCH`] runs at a time and writes their posts (and
    /// the shared renderings they use) in a few statements, so the rendered
    /// text held in memory stays a batch's or two, not a chunk's.
    ///
    /// The writes and the planning overlap the composing: a batch is
    /// planned on this thread and its shared renderings written; then its
    /// digests are finished on the workers while this thread writes the
    /// posts of the batch before it and plans the batch after it, and
    /// then joins the workers in finishing it ([`finish_beside`]). The
    /// posts still go in the runs' order, in this one transaction.
    fn hand_off_all(&mut self, c: &mut DbConn, runs: &[DueRun]) -> Result<Vec<Option<RequestId>>> {
        let mut out: Vec<Option<RequestId>> = vec![None; runs.len()];
        let batches: Vec<&[DueRun]> = runs.chunks(self.post_batch.max(1)).collect();
        let Some(first) = batches.first() else {
            return Ok(out);
        };
        let mut jobs = self.post_batch(c, first)?;
        // The finished batch not written yet: where it starts in `runs`.
        let mut unwritten: Option<(usize, Vec<Option<Post>>)> = None;
        for n in 0..batches.len() {
            let env = self.env();
            let t0 = std::time::Instant::now();
            let (done, (written, next, busy)) = finish_beside(&env, &jobs, self.workers, || {
                let written = unwritten
                    .take()
                    .map_or(Ok(()), |(at, posts)| write_posts(c, at, posts, &mut out));
                let next = match batches.get(n + 1) {
                    Some(b) if written.is_ok() => self.post_batch(c, b).map(Some),
                    _ => Ok(None),
                };
                (written, next, t0.elapsed())
            });
            // The tick's thread's writes and plan against the whole batch:
            // as long as it, and the workers waited for the tick's thread.
            tracing::debug!(meanwhile = ?busy, whole = ?t0.elapsed(), "digest batch finished");
            written?;
            let next = next?;
            unwritten = Some((n * self.post_batch.max(1), self.tally(&jobs, done)?));
            match next {
                Some(j) => jobs = j,
                None => break,
            }
        }
        if let Some((at, posts)) = unwritten {
            write_posts(c, at, posts, &mut out)?;
        }
        Ok(out)
    }
}

/// Writes `posts` (a batch starting at `at` in the runs, its shared
/// renderings written already) and puts each one's request id in `out`.
fn write_posts(
    c: &mut DbConn,
    at: usize,
    posts: Vec<Option<Post>>,
    out: &mut [Option<RequestId>],
) -> Result<()> {
    let mut slots = Vec::with_capacity(posts.len());
    let mut kept = Vec::with_capacity(posts.len());
    for (k, p) in posts.into_iter().enumerate() {
        if let Some(p) = p {
            slots.push(at + k);
            kept.push(p);
        }
    }
    let ids = store::write(c, &kept)?;
    for (slot, id) in slots.into_iter().zip(ids) {
        out[slot] = Some(id);
    }
    Ok(())
}

impl Post {
    /// Bytes of text this post stores (its own row's; a shared rendering is
    /// counted once, where it is made).
    fn bytes(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        self.subject.len()
            + opt(&self.unsubscribe_url)
            + match &self.bodies {
                Bodies::Own(r) => r.bytes(),
                Bodies::Shared {
                    sms,
                    webhook,
                    manage_url,
                    full_url,
                    ..
                } => opt(sms) + opt(webhook) + manage_url.len() + full_url.len(),
            }
    }
}
