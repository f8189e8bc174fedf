//! Composing and rendering a batch of digests on `[schedule]
//! compose_workers` threads.
//!
//! The tick's thread plans every run of the batch
//! ([`Composer::plan_unbuilt`], [`Composer::settle_body`]): it reads all
//! the database holds for them (the log's windows, the recipients, the
//! names their lines show; a chunk's recipients, and the windows most of
//! which its first batch reads, on as many of the pool's connections as
//! there are workers: `readers`), builds the bodies two or more of the
//! batch's runs share and renders the shared renderings, in the batch's order,
//! so the cache of shared renderings (`handoff`) is kept by one thread.
//! What is left is each run's own work, which reads nothing but the plan:
//! the list of a window without its recipient's own changes, the body
//! of content no one else reads, its rendering, the SMS text. That is
//! done by `compose_workers` threads ([`finish_beside`]), taking a few
//! runs at a time, while the tick's thread writes the posts of the batch
//! before and plans the next batch, then joins them (without writes, in
//! [`Composer::draft_all`], the tick's thread is one of the workers). The
//! workers read what they are handed ([`Env`]: the names and collections
//! loaded, shared, not the composer's own), so the planning may load more
//! meanwhile. The posts come back in the batch's order, to be written on
//! the tick's connection in its transaction. So the output is the same
//! for any number of workers.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::calendar::Publisher;
use super::link::LinkKey;
use super::listed::Actors;
use super::names::NameMap;
use super::post::{BodyKey, Composer, Recipient};
use super::render::{self, Content, Frame, Parts};
use super::store::{Bodies, BodyRef, Post};
use super::window::WindowChanges;
use super::words::Style;
use crate::config::DigestConfig;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, IdMap, PartyId};
use crate::parties::Channel;
use crate::schedule::DueRun;

/// What a run's content is made of.
pub(super) enum Source {
    /// The content itself (shared, or upcoming items).
    Ready(Content),
    /// A window read with this party's own collapse, to list without
    /// their own changes.
    Collapse(Arc<WindowChanges>, PartyId),
}

impl Source {
    /// The content (its recipient's own list, for [`Source::Collapse`]).
    pub fn content(&self) -> Content {
        match self {
            Source::Ready(c) => c.clone(),
            Source::Collapse(w, me) => Content::Changes(Arc::new(w.content_for(*me))),
        }
    }
}

/// A run's digest as the tick's thread plans it ([`Composer::plan_run`]).
pub(super) struct Planned {
    pub source: Source,
    /// The key its body is shared under, when it is.
    pub key: Option<BodyKey>,
    /// The shared body, built; `None` when the run's own is to be built.
    pub body: Option<Arc<render::Body>>,
    pub style: Style,
    pub recipient: Arc<Recipient>,
}

/// A recipient's links in a digest.
#[derive(Default)]
pub(super) struct RunLinks {
    pub manage_url: String,
    pub unsubscribe_url: Option<String>,
    pub full_url: String,
}

impl Planned {
    /// Whether the recipient has an unsubscribe link: users do, and so do
    /// a group's members (each their own, [`Env::links`]).
    pub fn unsubscribes(&self) -> bool {
        self.recipient.subscriber_code.is_some() || self.recipient.is_group
    }

    /// The frame that renders a built body with `links` (rendering needs no
    /// names).
    pub fn frame(&self, run: &DueRun, cfg: &DigestConfig, links: RunLinks) -> Frame<'static> {
        Frame {
            style: self.style,
            kind: run.kind,
            frequency: run.frequency,
            window_start: run.window_start,
            window_end: run.window_end,
            subscription: Some(run.subscription),
            collection: run.collection,
            collection_name: &|_| Cow::Borrowed(""),
            party_name: &|_| Cow::Borrowed(""),
            max_items: cfg.max_items,
            sms_segments: cfg.sms_segments,
            manage_url: links.manage_url,
            unsubscribe_url: links.unsubscribe_url,
            full_url: links.full_url,
            // The body is built: its calendar with it.
            calendar: None,
        }
    }
}

/// One run's work for a worker: its plan, the shared rendering it points
/// at (if any) and the renderings its channels read.
pub(super) struct Job<'r> {
    pub run: &'r DueRun,
    pub planned: Planned,
    pub shared: Option<BodyRef>,
    pub parts: Parts,
}

/// What the workers read: the names and collections loaded when their
/// batch was handed to them, and the settings. Their own handles, so the
/// composer may load more while they work.
pub(super) struct Env {
    cfg: Arc<DigestConfig>,
    calendar: Option<Arc<Publisher>>,
    names: Arc<NameMap>,
    collections: Arc<IdMap<CollectionId, String>>,
    system: Option<PartyId>,
    link: Option<LinkKey>,
    max_retries: i32,
}

impl Composer {
    /// What the workers of the batch planned last read.
    pub(super) fn env(&mut self) -> Env {
        Env {
            cfg: self.cfg.clone(),
            calendar: self.calendar.clone(),
            names: self.names.share(),
            collections: self.collections.clone(),
            system: self.system,
            link: self.link.clone(),
            max_retries: self.max_retries,
        }
    }

    /// `done` (what [`finish_beside`] made of `jobs`) counted in
    /// [`Composer::posted`], [`Composer::empty`] and the channels; the
    /// first error, if any.
    pub(super) fn tally(
        &mut self,
        jobs: &[Job],
        done: Vec<Result<Option<Post>>>,
    ) -> Result<Vec<Option<Post>>> {
        let mut out = Vec::with_capacity(jobs.len());
        for (job, post) in jobs.iter().zip(done) {
            let post = post?;
            if post.is_some() {
                self.posted += 1;
                for ch in job
                    .run
                    .channels
                    .split(',')
                    .filter_map(|c| Channel::parse(c).ok())
                {
                    *self.posted_channels.entry(ch.as_str()).or_default() += 1;
                }
            } else {
                self.empty += 1;
            }
            out.push(post);
        }
        Ok(out)
    }
}

/// Runs a thread takes from a batch at a time: few enough that the
/// threads end together, enough that taking them costs nothing.
const TAKE: usize = 16;

/// `jobs` finished by `helpers` threads, which start at once, and this
/// one, which first runs `meanwhile` (the batch before's writes, the next
/// batch's plan). Each takes [`TAKE`] runs at a time. The posts (`None`
/// for an empty digest that posts nothing) come in `jobs`' order, with
/// what `meanwhile` returned.
pub(super) fn finish_beside<T>(
    env: &Env,
    jobs: &[Job],
    helpers: usize,
    meanwhile: impl FnOnce() -> T,
) -> (Vec<Result<Option<Post>>>, T) {
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(TAKE, Ordering::Relaxed);
            match jobs.get(at..jobs.len().min(at + TAKE)) {
                Some(part) if !part.is_empty() => {
                    done.push((at, part.iter().map(|j| env.finish(j)).collect::<Vec<_>>()));
                }
                _ => return done,
            }
        }
    };
    let helpers = if jobs.is_empty() { 0 } else { helpers };
    let (mut done, t) = std::thread::scope(|s| {
        let others: Vec<_> = (0..helpers).map(|_| s.spawn(take)).collect();
        let t = meanwhile();
        let mut done = take();
        for h in others {
            done.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        (done, t)
    });
    done.sort_unstable_by_key(|(at, _)| *at);
    (done.into_iter().flat_map(|(_, d)| d).collect(), t)
}

/// The subject and lines of `content` in `style`, each name looked up in
/// `names` and `collections` (one missing is shown by its id).
pub(super) fn body_of<'n>(
    cfg: &DigestConfig,
    calendar: Option<&Arc<Publisher>>,
    run: &DueRun,
    content: &Content,
    style: Style,
    collections: &'n IdMap<CollectionId, String>,
    names: &dyn Fn(PartyId) -> Option<&'n String>,
) -> render::Body {
    let coll_name = |id: CollectionId| -> Cow<str> {
        match collections.get(&id) {
            Some(n) => Cow::Borrowed(n),
            None => Cow::Owned(format!("collection {id}")),
        }
    };
    let party_name = |p: PartyId| -> Cow<str> {
        match names(p) {
            Some(n) => Cow::Borrowed(n),
            None => Cow::Owned(format!("party {p}")),
        }
    };
    let frame = Frame {
        style,
        kind: run.kind,
        frequency: run.frequency,
        window_start: run.window_start,
        window_end: run.window_end,
        subscription: Some(run.subscription),
        collection: run.collection,
        collection_name: &coll_name,
        party_name: &party_name,
        max_items: cfg.max_items,
        sms_segments: cfg.sms_segments,
        manage_url: String::new(),
        unsubscribe_url: None,
        full_url: String::new(),
        calendar: calendar.cloned(),
    };
    render::body(content, &frame)
}

impl Env {
    /// The subject and lines of `content` in `style` (every name loaded).
    pub fn body(&self, run: &DueRun, content: &Content, style: Style) -> render::Body {
        let names = |p| self.names.get(&p);
        let (cfg, cal) = (&self.cfg, self.calendar.as_ref());
        body_of(cfg, cal, run, content, style, &self.collections, &names)
    }

    /// `run`'s links for its recipient `r`: where to manage its
    /// subscriptions and unsubscribe, and the signed whole digest. A
    /// group's digest reaches each member with the member's own links: the
    /// code in them is a hole ([`render::HOLE_CODE`]) that the queue fills
    /// with each member's code, and the member's unsubscribe opts them out
    /// of the group's subscription (`http::pages::unsubscribe`).
    pub fn links(&self, run: &DueRun, r: &Recipient) -> RunLinks {
        let base = self.cfg.base_url.trim_end_matches('/');
        let code = match &r.subscriber_code {
            Some(code) => code.clone(),
            None => render::code_hole(),
        };
        let (manage_url, unsubscribe_url) = (
            format!("{base}/s/{code}"),
            Some(format!("{base}/s/{code}/unsubscribe/{}", run.subscription)),
        );
        let full_url = self
            .link
            .as_ref()
            .map(|k| k.url(base, run.subscription, &run.period.key))
            .unwrap_or_default();
        RunLinks {
            manage_url,
            unsubscribe_url,
            full_url,
        }
    }

    /// The sender: the one actor behind every change, else the system.
    fn sender(&self, content: &Content) -> Result<PartyId> {
        if let Content::Changes(v) = content {
            if let Actors::One(a) = v.actors() {
                return Ok(a);
            }
        }
        self.system
            .ok_or_else(|| Error::Storage("the digestd system party is missing".into()))
    }

    /// `job`'s digest ready to post, or `None` when it is empty and the
    /// subscription does not ask for empty ones.
    fn finish(&self, job: &Job) -> Result<Option<Post>> {
        let (run, p) = (job.run, &job.planned);
        let content = p.source.content();
        if content.is_empty() && !run.send_empty {
            return Ok(None);
        }
        let from = self.sender(&content)?;
        let body = match &p.body {
            Some(b) => b.clone(),
            None => Arc::new(self.body(run, &content, p.style)),
        };
        let frame = p.frame(run, &self.cfg, self.links(run, &p.recipient));
        let bodies = match job.shared {
            Some(shared) => {
                let own = Parts {
                    email: false,
                    chat: false,
                    sms: job.parts.sms,
                    webhook: job.parts.webhook,
                };
                let mine = render::render_body(&body, &frame, own)?;
                Bodies::Shared {
                    body: shared,
                    sms: mine.sms,
                    webhook: mine.webhook,
                    manage_url: frame.manage_url.clone(),
                    full_url: frame.full_url.clone(),
                }
            }
            None => Bodies::Own(render::render_body(&body, &frame, job.parts)?),
        };
        Ok(Some(Post {
            party_to: run.party,
            expand_group: p.recipient.is_group,
            party_from: from,
            subject: body.subject.clone(),
            channels: run.channels.clone(),
            request_date: run.tick.naive_utc(),
            max_retries: self.max_retries,
            subscription: run.subscription,
            period: run.period.key.clone(),
            unsubscribe_url: frame.unsubscribe_url.clone(),
            bodies,
        }))
    }
}
