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
//! Just over 500 lines: the composer, its cache and the posting share
//! the tick's transaction and one set of cached rows; kept together so the
//! cache's invalidation and its users read in one place.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use diesel::prelude::*;
use lettre::message::Mailbox;

use super::compose::{self, ItemChange, Upcoming};
use super::handoff::StoredKey;
use super::link::LinkKey;
use super::render::{self, Content, Frame, Parts, Rendered};
use super::store::BodyRef;
use super::words::Style;
use crate::config::{DigestConfig, EmailConfig};
use crate::db::schema::{collections, group_prefs, parties, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId};
use crate::modlog::{self, Modification};
use crate::schedule::DueRun;
use crate::subscriptions::Kind;

use crate::parties::SYSTEM_PARTY;

/// Windows kept in the cache before it is emptied.
const CACHE_WINDOWS: usize = 4_096;

/// Who a digest is for, as rendering needs it.
#[derive(Debug, Clone)]
pub struct Recipient {
    pub name: String,
    pub is_group: bool,
    pub tz: Tz,
    pub locale: String,
    pub subscriber_code: Option<String>,
}

type Window = (Option<CollectionId>, DateTime<Utc>, DateTime<Utc>);

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

/// A run's digest before rendering: what [`Composer::prepare_run`] gives.
pub(super) struct Prepared {
    pub content: Content,
    /// The key its body is shared under, when it is.
    pub key: Option<BodyKey>,
    pub body: Rc<render::Body>,
    pub style: Style,
    /// The recipient is a group (its request is expanded to the members).
    pub is_group: bool,
    pub manage_url: String,
    pub unsubscribe_url: Option<String>,
    pub full_url: String,
}

impl Prepared {
    /// The frame that renders the prepared body for its recipient (the body
    /// is built: rendering needs no names).
    pub fn frame<'a>(&'a self, run: &DueRun, cfg: &DigestConfig) -> Frame<'a> {
        Frame {
            style: self.style,
            kind: run.kind,
            frequency: run.frequency,
            window_start: run.window_start,
            window_end: run.window_end,
            collection: run.collection,
            collection_name: &|_| String::new(),
            party_name: &|_| String::new(),
            max_items: cfg.max_items,
            sms_segments: cfg.sms_segments,
            manage_url: self.manage_url.clone(),
            unsubscribe_url: self.unsubscribe_url.clone(),
            full_url: self.full_url.clone(),
        }
    }
}

/// One window of the log, read once: the modifications, their collapse for
/// someone who made none of them, and who made them.
struct WindowChanges {
    mods: Vec<Modification>,
    all: Rc<Vec<ItemChange>>,
    actors: HashSet<PartyId>,
}

/// Composes and posts digests; implements [`HandOff`].
pub struct Composer {
    pub(super) cfg: DigestConfig,
    from: Mailbox,
    system: Option<PartyId>,
    recipients: HashMap<PartyId, Rc<Recipient>>,
    names: HashMap<PartyId, String>,
    collections: HashMap<CollectionId, String>,
    changes: HashMap<Window, Rc<WindowChanges>>,
    /// Bodies of shared content; the entry keeps its content alive, so the
    /// address in the key cannot be reused while the entry exists.
    bodies: HashMap<BodyKey, (Content, Rc<render::Body>)>,
    upcoming: HashMap<Window, Rc<Vec<Upcoming>>>,
    /// Shared renderings stored (or about to be) in this chunk's
    /// transaction (`handoff`); emptied with `bodies`, whose keys they use.
    pub(super) stored: HashMap<StoredKey, BodyRef>,
    /// The last chunk handed off has committed (`stored` holds only
    /// renderings that are there for the next one).
    pub(super) chunk_committed: bool,
    /// The whole-digest links' key, loaded on first use.
    link: Option<LinkKey>,
    /// Share one body among recipients of the same content and style (on by
    /// default; the compose benchmark turns it off to show the cost of
    /// rendering every digest from scratch).
    pub share_bodies: bool,
    /// Attempts before a digest is given up, from `[email] max_retries`.
    pub(super) max_retries: i32,
    /// Digests posted, and runs that were empty and posted nothing.
    pub posted: usize,
    pub empty: usize,
    /// Digests posted per channel they go out on (one digest on two
    /// channels counts once in each), for the metrics.
    pub posted_channels: BTreeMap<&'static str, usize>,
}

impl Composer {
    pub fn new(digest: &DigestConfig, email: &EmailConfig) -> Result<Composer> {
        Ok(Composer {
            cfg: digest.clone(),
            from: crate::text::parse_from(&email.from)?,
            system: None,
            recipients: HashMap::new(),
            names: HashMap::new(),
            collections: HashMap::new(),
            changes: HashMap::new(),
            bodies: HashMap::new(),
            stored: HashMap::new(),
            chunk_committed: true,
            share_bodies: true,
            max_retries: email.max_retries as i32,
            upcoming: HashMap::new(),
            link: None,
            posted: 0,
            empty: 0,
            posted_channels: BTreeMap::new(),
        })
    }

    /// The configured sender.
    pub fn from(&self) -> &Mailbox {
        &self.from
    }

    pub(super) fn recipient(&mut self, c: &mut DbConn, party: PartyId) -> Result<Rc<Recipient>> {
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
    /// per 10,000.
    pub(super) fn load_recipients(&mut self, c: &mut DbConn, parties_: &[PartyId]) -> Result<()> {
        let mut want: Vec<i64> = parties_
            .iter()
            .filter(|p| !self.recipients.contains_key(p))
            .map(|p| p.0)
            .collect();
        want.sort_unstable();
        want.dedup();
        type Row = (
            i64,
            String,
            String,
            Option<(String, String, String)>,
            Option<(String, String)>,
        );
        for chunk in want.chunks(10_000) {
            let rows: Vec<Row> = parties::table
                .left_join(users::table)
                .left_join(group_prefs::table)
                .filter(parties::id.eq_any(chunk))
                .select((
                    parties::id,
                    parties::name,
                    parties::kind,
                    (users::timezone, users::locale, users::subscriber_code).nullable(),
                    (group_prefs::timezone, group_prefs::locale).nullable(),
                ))
                .load(c)?;
            for (id, name, kind, user, group) in rows {
                let zone = |tz: String| -> Result<Tz> {
                    tz.parse()
                        .map_err(|_| Error::Storage(format!("stored timezone {tz:?} is unknown")))
                };
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
                self.recipients.insert(PartyId(id), Rc::new(r));
            }
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
        if self.names.len() > 200_000 {
            self.names.clear();
        }
        want.sort_unstable();
        want.dedup();
        for chunk in want.chunks(10_000) {
            let rows: Vec<(i64, String)> = parties::table
                .filter(parties::id.eq_any(chunk))
                .select((parties::id, parties::name))
                .load(c)?;
            self.names
                .extend(rows.into_iter().map(|(i, n)| (PartyId(i), n)));
        }
        // A party gone since (the log keeps its id) is named by id, once.
        for id in want {
            self.names
                .entry(PartyId(id))
                .or_insert_with(|| format!("party {id}"));
        }
        Ok(())
    }

    fn collection_name(&mut self, c: &mut DbConn, id: CollectionId) -> Result<String> {
        if !self.collections.contains_key(&id) {
            let rows: Vec<(i64, String)> = collections::table
                .select((collections::id, collections::name))
                .load(c)?;
            self.collections
                .extend(rows.into_iter().map(|(i, n)| (CollectionId(i), n)));
        }
        Ok(self
            .collections
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("collection {id}")))
    }

    fn system_party(&mut self, c: &mut DbConn) -> Result<PartyId> {
        if let Some(p) = self.system {
            return Ok(p);
        }
        let id: i64 = parties::table
            .filter(parties::name.eq(SYSTEM_PARTY))
            .select(parties::id)
            .first(c)
            .optional()?
            .ok_or_else(|| Error::Storage("the digestd system party is missing".into()))?;
        self.system = Some(PartyId(id));
        Ok(PartyId(id))
    }

    fn trim_caches(&mut self) {
        if self.changes.len() > CACHE_WINDOWS {
            self.changes.clear();
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
        self.trim_caches();
        let key = (run.collection, run.window_start, run.window_end);
        let colls = run.collection.map(|c| [c]);
        Ok(match run.kind {
            Kind::Modification => {
                let w = match self.changes.get(&key) {
                    Some(w) => w.clone(),
                    None => {
                        let mods = modlog::find_in_window(
                            c,
                            colls.as_ref().map(|a| &a[..]),
                            run.window_start,
                            run.window_end,
                        )?;
                        let w = Rc::new(WindowChanges {
                            all: Rc::new(compose::collapse(&mods, None)?),
                            actors: mods.iter().filter_map(|m| m.actor).collect(),
                            mods,
                        });
                        self.changes.insert(key, w.clone());
                        w
                    }
                };
                // Most subscribers made none of the window's changes: they
                // share the one collapse; the others get their own.
                match (!run.include_own).then_some(run.party) {
                    Some(me) if w.actors.contains(&me) => (
                        Content::Changes(Rc::new(compose::collapse(&w.mods, Some(me))?)),
                        false,
                    ),
                    _ => (Content::Changes(w.all.clone()), true),
                }
            }
            Kind::Forward => {
                let ups = match self.upcoming.get(&key) {
                    Some(u) => u.clone(),
                    None => {
                        let u = Rc::new(compose::items_in_range(
                            c,
                            colls.as_ref().map(|a| &a[..]),
                            run.window_start,
                            run.window_end,
                        )?);
                        self.upcoming.insert(key, u.clone());
                        u
                    }
                };
                (Content::Upcoming(ups), true)
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
        let p = self.prepare_run(c, run)?;
        let rendered = render::render_body(&p.body, &p.frame(run, &self.cfg), parts)?;
        Ok((p.content, rendered))
    }

    /// `run`'s content, its body (built once for every recipient of the
    /// same shared content in the same style) and the recipient's links.
    pub(super) fn prepare_run(&mut self, c: &mut DbConn, run: &DueRun) -> Result<Prepared> {
        let (content, shared) = self.content(c, run)?;
        let r = self.recipient(c, run.party)?;
        let style = Style::new(r.tz, &r.locale);
        let base = self.cfg.base_url.trim_end_matches('/');
        let (manage_url, unsubscribe_url) = match &r.subscriber_code {
            Some(code) => (
                format!("{base}/s/{code}"),
                Some(format!("{base}/s/{code}/unsubscribe/{}", run.subscription)),
            ),
            None => (format!("{base}/groups/{}", r.name), None),
        };
        if self.link.is_none() {
            self.link = Some(LinkKey::load(c)?);
        }
        let full_url = self
            .link
            .as_ref()
            .map(|k| k.url(base, run.subscription, &run.period.key))
            .unwrap_or_default();
        // Recipients of the same shared content in the same style read the
        // same body: build it once.
        let key: BodyKey = (
            content.ptr(),
            style,
            run.collection,
            run.window_start,
            run.window_end,
            run.kind.as_str(),
            run.frequency.as_str(),
        );
        let shared = shared && self.share_bodies;
        let cached = if shared {
            self.bodies.get(&key).map(|(_, b)| b.clone())
        } else {
            None
        };
        let body = match cached {
            Some(b) => b,
            None => {
                let b = Rc::new(self.build_body(c, run, &content, style)?);
                if shared {
                    self.bodies.insert(key, (content.clone(), b.clone()));
                }
                b
            }
        };
        Ok(Prepared {
            content,
            key: shared.then_some(key),
            body,
            style,
            is_group: r.is_group,
            manage_url,
            unsubscribe_url,
            full_url,
        })
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
        let mut colls = HashMap::new();
        let mut ids: Vec<CollectionId> = run.collection.into_iter().collect();
        let mut actors = Vec::new();
        match content {
            Content::Changes(v) => {
                for (i, ch) in v.iter().enumerate() {
                    ids.push(ch.collection);
                    // Names only for the lines shown.
                    if i < self.cfg.max_items {
                        actors.extend(ch.actors.iter().copied());
                    }
                }
            }
            Content::Upcoming(v) => ids.extend(v.iter().map(|u| u.collection)),
        }
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let n = self.collection_name(c, id)?;
            colls.insert(id, n);
        }
        self.load_names(c, &actors)?;
        let names = &self.names;
        let coll_name = |id: CollectionId| {
            colls
                .get(&id)
                .cloned()
                .unwrap_or_else(|| format!("collection {id}"))
        };
        let party_name = |p: PartyId| {
            names
                .get(&p)
                .cloned()
                .unwrap_or_else(|| format!("party {p}"))
        };
        let frame = Frame {
            style,
            kind: run.kind,
            frequency: run.frequency,
            window_start: run.window_start,
            window_end: run.window_end,
            collection: run.collection,
            collection_name: &coll_name,
            party_name: &party_name,
            max_items: self.cfg.max_items,
            sms_segments: self.cfg.sms_segments,
            manage_url: String::new(),
            unsubscribe_url: None,
            full_url: String::new(),
        };
        Ok(render::body(content, &frame))
    }

    /// The sender: the one actor behind every change, else the system.
    pub(super) fn sender(&mut self, c: &mut DbConn, content: &Content) -> Result<PartyId> {
        if let Content::Changes(v) = content {
            let mut it = v.iter().flat_map(|ch| ch.actors.iter());
            if let Some(first) = it.next() {
                if it.all(|a| a == first) && v.iter().all(|ch| !ch.actors.is_empty()) {
                    return Ok(*first);
                }
            }
        }
        self.system_party(c)
    }
}
