//! The hand-off from the tick: each due run is composed, rendered and
//! posted as an nt request (status `pending`) inside the tick's own
//! transaction, so a run is never recorded without its digest nor a digest
//! posted without its run. An empty digest posts nothing unless the
//! subscription asks for empty ones; the run is recorded either way, so the
//! window chains.
//!
//! One [`Composer`] serves a whole tick and caches what many runs share:
//! subscriptions due at the same instant in the same zone read the same
//! window of the same collection, so the log is read once per (collection,
//! window), not once per subscriber.
//!
//! About 700 lines: the composer, its cache (with the batch reads that
//! fill it ahead of planning) and the posting share the tick's
//! transaction and one set of cached rows; kept together so the cache's
//! invalidation and its users read in one place.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use diesel::prelude::*;
use lettre::message::Mailbox;

use super::calendar::Publisher;
use super::compose::{self, Upcoming};
use super::handoff::StoredKey;
use super::link::LinkKey;
use super::names::Names;
use super::readers::read_parts;
use super::render::{self, Content, Parts, Rendered};
use super::store::BodyRef;
use super::window::{
    read_window, read_windows, Excluders, Reading, Window, WindowChanges, READ_WHOLE,
};
use super::words::Style;
use super::workers::{Planned, Source};
use crate::config::{DigestConfig, EmailConfig};
use crate::db::schema::{collections, group_prefs, parties, users};
use crate::db::{Db, DbConn};
use crate::error::{Error, Result};
use crate::ids::{CollectionId, IdMap, PartyId};
use crate::modlog;
use crate::schedule::DueRun;
use crate::subscriptions::Kind;

use crate::parties::SYSTEM_PARTY;

/// Shared bodies and upcoming lists kept in their caches before they are
/// emptied.
const CACHE_WINDOWS: usize = 4_096;
/// Windows of the log kept before the cache is emptied, and the changes
/// they may keep in all (a few hundred bytes each). Sized for every window
/// of one tick: a tick's runs come in subscription order, not by
/// collection, so a cache smaller than the tick's windows is emptied and
/// its windows read again several times over (`bench burst`: 5,000 collections, about five reads each with
/// room for 4,096 windows).
const CACHE_LOG_WINDOWS: usize = 65_536;
const CACHE_LOG_CHANGES: usize = 250_000;
/// Recipients read in one query at most; when a chunk's are spread over
/// connections, each query reads at least a quarter as many.
const RECIPIENTS_READ: usize = 10_000;

/// Who a digest is for, as rendering needs it.
#[derive(Debug, Clone)]
pub struct Recipient {
    pub name: String,
    pub is_group: bool,
    pub tz: Tz,
    pub locale: String,
    pub subscriber_code: Option<String>,
}

/// (shared content, style, collection, window, kind, frequency).
pub(super) type BodyKey = (
    usize,
    Style,
    Option<CollectionId>,
    DateTime<Utc>,
    DateTime<Utc>,
    &'static str,
    &'static str,
);

/// Composes and posts digests; implements [`HandOff`].
pub struct Composer {
    pub(super) cfg: Arc<DigestConfig>,
    from: Mailbox,
    /// Who publishes forward digests' calendars (`[email] calendar`).
    pub(super) calendar: Option<Arc<Publisher>>,
    pub(super) system: Option<PartyId>,
    recipients: IdMap<PartyId, Arc<Recipient>>,
    pub(super) names: Names,
    /// Windows whose every actor is in `names` (their recipients' own
    /// lists are made by the workers, who read names, never load them).
    names_loaded: HashSet<Window>,
    pub(super) collections: Arc<IdMap<CollectionId, String>>,
    changes: HashMap<Window, Arc<WindowChanges>>,
    /// Changes kept by the windows in `changes`.
    changes_kept: usize,
    /// The seen marks of the chunk's recipients on its windows' items.
    pub(super) seen: super::seen::SeenMarks,
    /// Who leaves their own changes out, per window of the chunk being
    /// handed off: what a window read for it keeps of its log.
    pub(super) excluders: Option<Excluders>,
    /// Bodies of shared content; the entry keeps its content alive, so the
    /// address in the key cannot be reused while the entry exists.
    bodies: HashMap<BodyKey, (Content, Arc<render::Body>)>,
    upcoming: HashMap<Window, Arc<Vec<Upcoming>>>,
    /// Shared renderings stored (or about to be) in this chunk's
    /// transaction (`handoff`); emptied with `bodies`, whose keys they use.
    pub(super) stored: HashMap<StoredKey, BodyRef>,
    /// The last chunk handed off has committed (`stored` holds only
    /// renderings that are there for the next one).
    pub(super) chunk_committed: bool,
    /// Hashes of the keys rendered alone in this chunk's batches so far
    /// (`handoff`): a later batch's reader of one shares its rendering.
    pub(super) alone: HashSet<u64>,
    /// Runs composed and written at a time (`handoff::POST_BATCH`; tests
    /// set fewer, to spread a chunk over batches).
    pub post_batch: usize,
    /// The whole-digest links' key, loaded on first use.
    pub(super) link: Option<LinkKey>,
    /// Share one body among recipients of the same content and style (on by
    /// default; the compose benchmark turns it off to show the cost of
    /// rendering every digest from scratch).
    pub share_bodies: bool,
    /// Threads a chunk's digests are composed and rendered on, from
    /// `[schedule] compose_workers`, beside the tick's, which writes the
    /// batch before and plans the batch after meanwhile, then joins them
    /// (in [`Composer::draft_all`], which writes nothing, the tick's
    /// thread is one of them: 1 is this one alone).
    pub workers: usize,
    /// Modifications a window of the log may hold to be read whole; one
    /// with more is streamed, one item at a time ([`READ_WHOLE`]; tests
    /// set fewer).
    pub read_whole: usize,
    /// Windows read so far, and of them streamed.
    pub window_reads: usize,
    pub streamed: usize,
    /// Attempts before a digest is given up, from `[email] max_retries`.
    pub(super) max_retries: i32,
    /// A pool to read a batch's windows through on more than one
    /// connection at once ([`Composer::read_through`]); `None`: the tick's
    /// connection alone.
    readers: Option<Db>,
    /// Digests posted, and runs that were empty and posted nothing.
    pub posted: usize,
    pub empty: usize,
    /// Digests posted per channel they go out on (one digest on two
    /// channels counts once in each), for the metrics.
    pub posted_channels: BTreeMap<&'static str, usize>,
}

impl Composer {
    pub fn new(digest: &DigestConfig, email: &EmailConfig) -> Result<Composer> {
        let from = crate::config::parse_from(&email.from)?;
        Ok(Composer {
            cfg: Arc::new(digest.clone()),
            calendar: email.calendar.then(|| Arc::new(Publisher::new(&from))),
            from,
            system: None,
            recipients: IdMap::default(),
            names: Names::default(),
            names_loaded: HashSet::new(),
            collections: Arc::default(),
            changes: HashMap::new(),
            changes_kept: 0,
            excluders: None,
            seen: Default::default(),
            bodies: HashMap::new(),
            stored: HashMap::new(),
            chunk_committed: true,
            alone: HashSet::new(),
            post_batch: super::handoff::POST_BATCH,
            share_bodies: true,
            workers: 1,
            readers: None,
            read_whole: READ_WHOLE,
            window_reads: 0,
            streamed: 0,
            max_retries: email.max_retries as i32,
            upcoming: HashMap::new(),
            link: None,
            posted: 0,
            empty: 0,
            posted_channels: BTreeMap::new(),
        })
    }

    /// Reads a batch's windows through `db`'s pool as well as the tick's
    /// connection, on up to [`Composer::workers`] connections at once. Not
    /// for an in-memory SQLite database, whose other connections are
    /// other databases (the tick's connection alone reads it then).
    pub fn read_through(&mut self, db: &Db) {
        self.readers = (!db.url().is_memory()).then(|| db.clone());
    }

    /// The configured sender.
    pub fn from(&self) -> &Mailbox {
        &self.from
    }

    pub(super) fn recipient(&mut self, c: &mut DbConn, party: PartyId) -> Result<Arc<Recipient>> {
        if !self.recipients.contains_key(&party) {
            self.load_recipients(c, &[party])?;
        }
        self.recipients
            .get(&party)
            .cloned()
            .ok_or_else(|| Error::Storage(format!("party {party} is missing")))
    }

    /// Forgets the recipients when they are many (each chunk loads its own).
    pub(super) fn trim_recipients(&mut self) {
        if self.recipients.len() > 200_000 {
            self.recipients.clear();
        }
    }

    /// Loads the recipients among `parties` not cached yet, in one query
    /// per [`RECIPIENTS_READ`] (a chunk's, when it starts, spread over as
    /// many connections as there are workers: [`read_parts`]).
    pub(super) fn load_recipients(&mut self, c: &mut DbConn, parties_: &[PartyId]) -> Result<()> {
        let mut want: Vec<i64> = parties_
            .iter()
            .filter(|p| !self.recipients.contains_key(p))
            .map(|p| p.0)
            .collect();
        want.sort_unstable();
        want.dedup();
        let per = want
            .len()
            .div_ceil(self.workers.max(1))
            .clamp(RECIPIENTS_READ / 4, RECIPIENTS_READ);
        let parts: Vec<&[i64]> = want.chunks(per).collect();
        let readers = self.readers.as_ref();
        for (id, r) in read_parts(c, readers, self.workers, &parts, |c, p| {
            read_recipients(c, p)
        })? {
            self.recipients.insert(id, Arc::new(r));
        }
        Ok(())
    }

    /// Loads the names among `ids` not cached yet, in one query.
    fn load_names(&mut self, c: &mut DbConn, ids: &[PartyId]) -> Result<()> {
        let mut want: Vec<i64> = ids
            .iter()
            .filter(|p| !self.names.contains_key(p))
            .map(|p| p.0)
            .collect();
        if want.is_empty() {
            return Ok(());
        }
        want.sort_unstable();
        want.dedup();
        for chunk in want.chunks(10_000) {
            let rows: Vec<(i64, String)> = parties::table
                .filter(parties::id.eq_any(chunk))
                .select((parties::id, parties::name))
                .load(c)?;
            for (i, n) in rows {
                self.names.insert(PartyId(i), n);
            }
        }
        // A party gone since (the log keeps its id) is named by id, once.
        for id in want {
            if !self.names.contains_key(&PartyId(id)) {
                self.names.insert(PartyId(id), format!("party {id}"));
            }
        }
        Ok(())
    }

    /// Forgets the names when they are many (workers finishing a batch
    /// keep the ones they were handed).
    pub(super) fn trim_names(&mut self) {
        if self.names.len() > 200_000 {
            self.names.clear();
            self.names_loaded.clear();
        }
    }

    /// Every collection's name (there are few; one that is missing, even
    /// then, is named by id).
    fn load_collections(&mut self, c: &mut DbConn) -> Result<()> {
        let rows: Vec<(i64, String)> = collections::table
            .select((collections::id, collections::name))
            .load(c)?;
        // Copied only when workers hold it: collections are few, and all
        // are loaded at the first one missing.
        Arc::make_mut(&mut self.collections)
            .extend(rows.into_iter().map(|(i, n)| (CollectionId(i), n)));
        Ok(())
    }

    /// Looks the system party up once: the sender of a digest whose changes
    /// are not all one actor's ([`super::workers::Env::sender`]).
    pub(super) fn load_system(&mut self, c: &mut DbConn) -> Result<()> {
        if self.system.is_none() {
            self.system = parties::table
                .filter(parties::name.eq(SYSTEM_PARTY))
                .select(parties::id)
                .first::<i64>(c)
                .optional()?
                .map(PartyId);
        }
        Ok(())
    }

    fn trim_caches(&mut self) {
        // Twice the budget: `preload_windows` keeps to it before reading a
        // batch's windows, which must not be dropped while it is planned.
        if self.changes.len() > CACHE_LOG_WINDOWS || self.changes_kept > 2 * CACHE_LOG_CHANGES {
            self.clear_windows();
        }
        if self.upcoming.len() > CACHE_WINDOWS {
            self.upcoming.clear();
        }
        if self.bodies.len() > CACHE_WINDOWS {
            self.bodies.clear();
            self.stored.clear();
        }
    }

    /// The digest's content for `run`, read through the caches, and whether
    /// it is the shared list (not one collapsed for this recipient alone).
    pub fn content(&mut self, c: &mut DbConn, run: &DueRun) -> Result<(Content, bool)> {
        let (source, shared) = self.source(c, run)?;
        Ok((source.content(), shared))
    }

    /// What `run`'s content is made of: the shared list, read through the
    /// caches, or a window read with its recipient's own collapse (their
    /// list is left to [`Source::content`], on a worker).
    pub(super) fn source(&mut self, c: &mut DbConn, run: &DueRun) -> Result<(Source, bool)> {
        self.trim_caches();
        let key = (run.collection, run.span());
        let colls = run.collection.map(|c| [c]);
        let colls = colls.as_ref().map(|a| &a[..]);
        Ok(match run.kind {
            Kind::Modification => {
                let how = self.reading();
                // Read for the chunk's excluders, or (a run on its own) for
                // this recipient when they leave their own changes out.
                let me = (!run.include_own).then_some(run.party);
                let alone = me.map(|p| HashSet::from([p]));
                let w = match self.changes.get(&key) {
                    Some(w) => w.clone(),
                    None => {
                        let ex = match &self.excluders {
                            Some(e) => e.get(&key),
                            None => alone.as_ref(),
                        };
                        let w = read_window(c, run.collection, &run.span(), how, ex)?;
                        self.keep_window(key.clone(), w.clone());
                        w
                    }
                };
                // Marks on its items, unless the chunk's read them.
                self.seen.read(c, &[(key.clone(), &w)], Some(run.party))?;
                // Most subscribers made none of the window's changes: they
                // share the one collapse; the others get their own, whose
                // names (a subset of the window's actors) are loaded here.
                let src = match me {
                    Some(me) if w.actors.contains(&me) => {
                        // Read for another chunk, without what `me` needs.
                        let w = if w.covers(me) {
                            w
                        } else {
                            // For this chunk's other excluders too: each
                            // would read it again otherwise.
                            let mut ex = w.read_for().clone();
                            if let Some(chunk) = self.excluders.as_ref().and_then(|e| e.get(&key)) {
                                ex.extend(chunk.iter().copied());
                            }
                            ex.insert(me);
                            tracing::debug!(party = %me, "a window read again for its own collapse");
                            let again =
                                read_window(c, run.collection, &run.span(), how, Some(&ex))?;
                            self.keep_window(key.clone(), again.clone());
                            again
                        };
                        if !self.names_loaded.contains(&key) {
                            let actors: Vec<PartyId> = w.actors.iter().copied().collect();
                            self.load_names(c, &actors)?;
                            self.names_loaded.insert(key);
                        }
                        self.load_collection_names(c, run, &Content::Changes(w.all.clone()))?;
                        (Source::Collapse(w, me), false)
                    }
                    _ => (Source::Ready(Content::Changes(w.all.clone())), true),
                };
                // What the recipient saw already leaves the list.
                self.seen.apply(run.party, src)
            }
            Kind::Forward => {
                let ups = match self.upcoming.get(&key) {
                    Some(u) => u.clone(),
                    None => {
                        let u = Arc::new(compose::items_in_range(
                            c,
                            colls,
                            run.window_start,
                            run.window_end,
                        )?);
                        self.upcoming.insert(key, u.clone());
                        u
                    }
                };
                (Source::Ready(Content::Upcoming(ups)), true)
            }
        })
    }

    /// Composes `run`'s digest and renders what `parts` asks for, without
    /// posting it.
    pub fn compose(
        &mut self,
        c: &mut DbConn,
        run: &DueRun,
        parts: Parts,
    ) -> Result<(Content, Rendered)> {
        let p = self.plan_run(c, run)?;
        let content = p.source.content();
        let body = match &p.body {
            Some(b) => b.clone(),
            None => Arc::new(self.body(run, &content, p.style)),
        };
        let links = self.env().links(run, &p.recipient);
        let rendered = render::render_body(&body, &p.frame(run, &self.cfg, links), parts)?;
        Ok((content, rendered))
    }

    /// `run`'s source, its body when it is shared (built once for every
    /// recipient of the same shared content in the same style; else every
    /// name it needs is loaded) and its recipient, whose links are made
    /// from the loaded key ([`super::workers::Env::links`]).
    pub(super) fn plan_run(&mut self, c: &mut DbConn, run: &DueRun) -> Result<Planned> {
        let mut p = self.plan_unbuilt(c, run)?;
        self.settle_body(c, run, &mut p, true)?;
        Ok(p)
    }

    /// `run`'s plan without its body: the source, the recipient, the style,
    /// and in `key` the key its body would be shared under (shared content,
    /// sharing on). [`Composer::settle_body`] finishes it.
    pub(super) fn plan_unbuilt(&mut self, c: &mut DbConn, run: &DueRun) -> Result<Planned> {
        let (source, shared) = self.source(c, run)?;
        let r = self.recipient(c, run.party)?;
        let style = Style::new(r.tz, &r.locale);
        if self.link.is_none() {
            self.link = Some(LinkKey::load(c)?);
        }
        let key = match &source {
            Source::Ready(content) if shared && self.share_bodies => Some((
                content.ptr(),
                style,
                run.collection,
                run.window_start,
                run.window_end,
                run.kind.as_str(),
                run.frequency.as_str(),
            )),
            _ => None,
        };
        Ok(Planned {
            source,
            key,
            body: None,
            style,
            recipient: r,
        })
    }

    /// Gives `p` (from [`Composer::plan_unbuilt`]) its shared body: the one
    /// built already for its key, else, when `build`, one built now and
    /// kept for the key's other readers. Otherwise (its own body, or
    /// `build` false) `p` has no key and no body, and every name its body
    /// shows is loaded, for a worker to build it
    /// ([`super::workers::Env::body`]).
    pub(super) fn settle_body(
        &mut self,
        c: &mut DbConn,
        run: &DueRun,
        p: &mut Planned,
        build: bool,
    ) -> Result<()> {
        let Source::Ready(content) = &p.source else {
            return Ok(());
        };
        if let Some(key) = p.key {
            if let Some((_, b)) = self.bodies.get(&key) {
                p.body = Some(b.clone());
                return Ok(());
            }
            if build {
                let b = Arc::new(self.build_body(c, run, content, p.style)?);
                self.bodies.insert(key, (content.clone(), b.clone()));
                p.body = Some(b);
                return Ok(());
            }
        }
        p.key = None;
        self.load_body_names(c, run, content)
    }

    fn keep_window(&mut self, key: Window, w: Arc<WindowChanges>) {
        self.changes_kept += w.kept;
        self.window_reads += 1;
        self.streamed += usize::from(w.streamed);
        if let Some(old) = self.changes.insert(key, w) {
            self.changes_kept -= old.kept;
        }
    }

    /// How windows are read: enough of their changes kept for every line
    /// a digest shows, and for the lines of a recipient whose own changes,
    /// left out, take some of them away.
    pub(super) fn reading(&self) -> Reading {
        Reading {
            cap: kept_of(&self.cfg),
            read_whole: self.read_whole,
        }
    }

    fn clear_windows(&mut self) {
        self.changes.clear();
        self.changes_kept = 0;
    }

    /// Reads the log's windows of `batch`'s modification digests of one
    /// collection that are not cached, one query (and one for their
    /// values) per window's bounds, instead of two round trips a window.
    fn preload_windows(&mut self, c: &mut DbConn, batch: &[DueRun]) -> Result<()> {
        let mut want: HashMap<modlog::Span, Vec<CollectionId>> = HashMap::new();
        let mut n = 0;
        for run in batch.iter().filter(|r| r.kind == Kind::Modification) {
            let Some(coll) = run.collection else { continue };
            if self.changes.contains_key(&(Some(coll), run.span())) {
                continue;
            }
            let colls = want.entry(run.span()).or_default();
            if !colls.contains(&coll) {
                colls.push(coll);
                n += 1;
            }
        }
        if n == 0 {
            return Ok(());
        }
        // Room for them all, so none is emptied out before it is used.
        if self.changes.len() + n > CACHE_LOG_WINDOWS || self.changes_kept > CACHE_LOG_CHANGES {
            self.clear_windows();
        }
        // Parts small enough to spread over the readers, each one query
        // (and one for the values) per window's bounds.
        let per = n.div_ceil(4 * self.workers.max(1)).clamp(1, 1_000);
        let mut parts = Vec::new();
        for (bounds, colls) in &want {
            parts.extend(colls.chunks(per).map(|p| (bounds.clone(), p)));
        }
        let (ex, how) = (self.excluders.as_ref(), self.reading());
        for (key, w) in read_windows(c, self.readers.as_ref(), self.workers, &parts, how, ex)? {
            self.keep_window(key, w);
        }
        Ok(())
    }

    /// Reads `batch`'s windows and loads the names of every actor their
    /// shown lines name, in one query for the batch: loaded run by run,
    /// each digest of content no one else had read cost a round trip.
    pub(super) fn preload_names(&mut self, c: &mut DbConn, batch: &[DueRun]) -> Result<()> {
        self.preload_windows(c, batch)?;
        // The marks on the items of the batch's windows not read for yet
        // in this chunk, in one query.
        let read: Vec<(Window, &WindowChanges)> = batch
            .iter()
            .filter(|r| r.kind == Kind::Modification)
            .filter_map(|r| {
                let k = (r.collection, r.span());
                self.changes.get(&k).map(|w| (k, &**w))
            })
            .collect();
        self.seen.read(c, &read, None)?;
        let mut actors = Vec::new();
        // Each list once; kept, so no address is reused while it is seen.
        let mut seen = HashSet::new();
        let mut kept = Vec::new();
        for run in batch {
            if let (Source::Ready(Content::Changes(v)), _) = self.source(c, run)? {
                if seen.insert(Arc::as_ptr(&v)) {
                    for ch in v.items.iter().take(self.cfg.max_items) {
                        actors.extend(ch.actors.iter().copied());
                    }
                    kept.push(v);
                }
            }
        }
        self.load_names(c, &actors)
    }

    /// The names of collections and of actors that `content`'s body shows.
    fn load_body_names(&mut self, c: &mut DbConn, run: &DueRun, content: &Content) -> Result<()> {
        self.load_collection_names(c, run, content)?;
        let mut actors = Vec::new();
        if let Content::Changes(v) = content {
            // Names only for the lines shown.
            for ch in v.items.iter().take(self.cfg.max_items) {
                actors.extend(ch.actors.iter().copied());
            }
        }
        self.load_names(c, &actors)
    }

    /// The names of `run`'s collection and of every collection in `content`.
    fn load_collection_names(
        &mut self,
        c: &mut DbConn,
        run: &DueRun,
        content: &Content,
    ) -> Result<()> {
        // A content's items come in runs of one collection (most often all
        // of it): each run is looked up once, not each item.
        let mut last = None;
        let mut missing = |id: CollectionId| {
            last != Some(id) && {
                last = Some(id);
                !self.collections.contains_key(&id)
            }
        };
        let any_missing = run.collection.into_iter().any(&mut missing)
            || match content {
                Content::Changes(v) => {
                    v.items.iter().any(|ch| missing(ch.collection))
                        || v.rest_collections.iter().any(|c| missing(*c))
                }
                Content::Upcoming(v) => v.iter().any(|u| missing(u.collection)),
            };
        if any_missing {
            self.load_collections(c)?;
        }
        Ok(())
    }

    /// The subject and lines of `content` in `style`, with every name the
    /// lines need resolved first.
    pub(super) fn build_body(
        &mut self,
        c: &mut DbConn,
        run: &DueRun,
        content: &Content,
        style: Style,
    ) -> Result<render::Body> {
        self.load_body_names(c, run, content)?;
        Ok(self.body(run, content, style))
    }

    /// The subject and lines of `content` in `style`, on this thread, its
    /// names loaded already.
    fn body(&self, run: &DueRun, content: &Content, style: Style) -> render::Body {
        let names = |p| self.names.get(&p);
        let (cfg, cal) = (&self.cfg, self.calendar.as_ref());
        super::workers::body_of(cfg, cal, run, content, style, &self.collections, &names)
    }
}

/// Changes a window keeps in order under `cfg` (the rest it counts).
pub(super) fn kept_of(cfg: &DigestConfig) -> usize {
    cfg.max_items.saturating_mul(2).max(100)
}

type RecipientRow = (
    i64,
    String,
    String,
    Option<(String, String, String)>,
    Option<(String, String)>,
);

/// The recipients `ids` name, read in one query.
fn read_recipients(c: &mut DbConn, ids: &[i64]) -> Result<Vec<(PartyId, Recipient)>> {
    let rows: Vec<RecipientRow> = parties::table
        .left_join(users::table)
        .left_join(group_prefs::table)
        .filter(parties::id.eq_any(ids))
        .select((
            parties::id,
            parties::name,
            parties::kind,
            (users::timezone, users::locale, users::subscriber_code).nullable(),
            (group_prefs::timezone, group_prefs::locale).nullable(),
        ))
        .load(c)?;
    let zone = |tz: String| -> Result<Tz> {
        tz.parse()
            .map_err(|_| Error::Storage(format!("stored timezone {tz:?} is unknown")))
    };
    rows.into_iter()
        .map(|(id, name, kind, user, group)| {
            let r = match (user, group) {
                (Some((tz, locale, code)), _) => Recipient {
                    name,
                    is_group: false,
                    tz: zone(tz)?,
                    locale,
                    subscriber_code: Some(code),
                },
                // A group: its own zone and locale.
                (None, Some((tz, locale))) => Recipient {
                    name,
                    is_group: kind == "group",
                    tz: zone(tz)?,
                    locale,
                    subscriber_code: None,
                },
                // A party with no preferences row: UTC, 24-hour.
                (None, None) => Recipient {
                    name,
                    is_group: kind == "group",
                    tz: Tz::UTC,
                    locale: "en-GB".into(),
                    subscriber_code: None,
                },
            };
            Ok((PartyId(id), r))
        })
        .collect()
}
