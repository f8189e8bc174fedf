//! Seen marks in a modification digest: an item whose changes in the
//! window all happened at or before its recipient's mark on it (their
//! `last_at` ≤ the mark) is left out of their digest, and the digest says
//! how many were ("2 changes you have already seen are left out",
//! [`super::words::seen_left_out`]). An item changed after the mark stays,
//! with its whole net change in the window.
//!
//! The marks are a per-recipient filter like the own collapse
//! (`super::window`): read for a chunk's recipients and the items its
//! windows keep, in one query per batch that brings windows not read for
//! yet (the chunk's first batch reads most), and only for windows that
//! hold items. A recipient with no mark shares the window's list as
//! before; one whose marks leave something out gets a list of their own.
//! Marks are a person's: a group's digest is composed once for all its
//! members, so marks leave nothing out of it. Only what a window keeps
//! (its first changes) is filtered; the counted rest is not.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::listed::Listed;
use super::render::Content;
use super::window::{Window, WindowChanges};
use super::workers::Source;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::PartyId;
use crate::schedule::DueRun;
use crate::seen::{self, Marks};
use crate::subscriptions::Kind;

impl super::post::Composer {
    /// Queries for seen marks made so far (one per chunk in the common
    /// case; none for windows without items).
    pub fn seen_queries(&self) -> usize {
        self.seen.queries
    }
}

/// The marks of a chunk's recipients on its windows' items.
#[derive(Default)]
pub(super) struct SeenMarks {
    /// The chunk's recipients of each modification window.
    parties: HashMap<Window, Vec<PartyId>>,
    /// Windows whose marks are read for this chunk.
    read: HashSet<Window>,
    marks: Marks,
    /// Queries made (tests: one per chunk in the common case).
    pub queries: usize,
}

impl SeenMarks {
    /// A new chunk of `runs`: marks read for the chunk before are forgotten.
    pub fn begin_chunk(&mut self, runs: &[DueRun]) {
        self.parties.clear();
        self.read.clear();
        self.marks.clear();
        for r in runs.iter().filter(|r| r.kind == Kind::Modification) {
            self.parties
                .entry((r.collection, r.span()))
                .or_default()
                .push(r.party);
        }
    }

    /// Reads, in one query, the marks on the items of `windows` not read
    /// for yet, of their recipients in the chunk (`who`: also, or alone
    /// when no chunk names one).
    pub fn read(
        &mut self,
        c: &mut DbConn,
        windows: &[(Window, &WindowChanges)],
        who: Option<PartyId>,
    ) -> Result<()> {
        let mut parties: Vec<PartyId> = Vec::new();
        let mut items: HashSet<&str> = HashSet::new();
        let mut not_before: Option<DateTime<Utc>> = None;
        for (key, w) in windows {
            if !self.read.insert(key.clone()) {
                continue;
            }
            let (kept, first) = w.kept_items();
            let Some(first) = first else { continue };
            items.extend(kept);
            not_before = Some(not_before.map_or(first, |n| n.min(first)));
            parties.extend(self.parties.get(key).into_iter().flatten().copied());
            parties.extend(who);
        }
        let Some(not_before) = not_before else {
            return Ok(());
        };
        self.queries += 1;
        for (p, m) in seen::read_for(c, &parties, &items, not_before)? {
            self.marks.entry(p).or_default().extend(m);
        }
        Ok(())
    }

    /// `listed` as `me` gets it with their marks, or `None` when the marks
    /// leave nothing out.
    pub fn filter(&self, me: PartyId, listed: &Listed) -> Option<Listed> {
        let mine = self.marks.get(&me)?;
        let seen = |c: &super::compose::ItemChange| {
            mine.get(&c.item_uuid).is_some_and(|at| c.last_at <= *at)
        };
        let out = listed.items.iter().filter(|c| seen(c)).count();
        if out == 0 {
            return None;
        }
        Some(Listed {
            items: listed.items.iter().filter(|c| !seen(c)).cloned().collect(),
            seen: listed.seen + out,
            rest_collections: listed.rest_collections.clone(),
            ..*listed
        })
    }

    /// `src` (`run`'s source) as its recipient gets it with their marks:
    /// a list of their own when the marks leave something out.
    pub fn apply(&self, me: PartyId, src: (Source, bool)) -> (Source, bool) {
        if !self.marks.contains_key(&me) {
            return src;
        }
        let filtered = match &src.0 {
            Source::Ready(Content::Changes(v)) => self.filter(me, v),
            Source::Collapse(w, who) => self.filter(me, &w.content_for(*who)),
            Source::Ready(Content::Upcoming(_)) => None,
        };
        match filtered {
            Some(l) => (Source::Ready(Content::Changes(Arc::new(l))), false),
            None => src,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::compose::ItemChange;
    use crate::ids::CollectionId;
    use crate::modlog::Action;

    fn change(item: &str, first: i64, last: i64) -> Arc<ItemChange> {
        Arc::new(ItemChange {
            item_uuid: item.into(),
            collection: CollectionId(1),
            kind: "note".into(),
            title: item.into(),
            action: Action::Edited,
            actors: vec![],
            first_at: DateTime::from_timestamp(first, 0).unwrap(),
            last_at: DateTime::from_timestamp(last, 0).unwrap(),
            first_id: first,
            changes: vec![],
            url: None,
        })
    }

    #[test]
    fn an_item_leaves_only_when_its_last_change_is_at_or_before_the_mark() {
        let listed = Listed {
            items: vec![
                change("a", 10, 20),
                change("b", 10, 30),
                change("c", 10, 40),
            ],
            rest: 5,
            ..Listed::default()
        };
        let me = PartyId(7);
        let mut m = SeenMarks::default();
        let at = |s| DateTime::from_timestamp(s, 0).unwrap();
        m.marks.insert(
            me,
            HashMap::from([
                ("a".into(), at(20)),
                ("b".into(), at(25)),
                ("c".into(), at(5)),
            ]),
        );
        let out = m.filter(me, &listed).expect("a is left out");
        let left: Vec<&str> = out.items.iter().map(|c| c.item_uuid.as_str()).collect();
        assert_eq!(left, ["b", "c"]);
        assert_eq!((out.seen, out.rest, out.len()), (1, 5, 7));
        // Someone without marks, or marks that leave nothing out: shared.
        assert!(m.filter(PartyId(8), &listed).is_none());
        m.marks.insert(me, HashMap::from([("b".into(), at(29))]));
        assert!(m.filter(me, &listed).is_none());
    }
}
