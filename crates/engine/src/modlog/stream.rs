//! Reading a window of the log too large to hold: its modifications come
//! one item at a time, in the order [`super::find_in_span`] gives, and
//! only the item being read is in memory.
//!
//! One query reads the rows with their values (a left join), ordered by
//! item, time, order recorded and attribute, and the rows are taken as the
//! database hands them ([`crate::db::stream_rows!`]). The back end sorts
//! what it must sort on disk when it is large. What was recorded before the
//! window but dated in it (almost always nothing) is read first, whole, and
//! merged in.

use std::iter::Peekable;

use diesel::prelude::*;

use super::read::{filter_read, load_ahead, modification, reads_of, seen_at, ColumnIds, Read, Row};
use super::{Change, Modification, Span};
use crate::db::schema::{modification_values, modifications};
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::CollectionId;

/// A modification's columns and one of its values (none for a
/// modification without values).
type ValueRow = (Row, Option<(String, Option<String>, Option<String>)>);

/// The streamed read's query, typed for one back end.
macro_rules! value_rows {
    ($backend:ty, $read:expr, $colls:expr) => {{
        let q = modifications::table
            .left_join(modification_values::table)
            .select((
                row_columns!(),
                (
                    modification_values::attribute,
                    modification_values::old_value,
                    modification_values::new_value,
                )
                    .nullable(),
            ))
            .order((
                modifications::item_uuid.asc(),
                modifications::occurred_at.asc(),
                modifications::id.asc(),
                modification_values::attribute.asc(),
            ))
            .into_boxed::<$backend>();
        filter_read!(q, $read, $colls)
    }};
}

/// Calls `each` with every item's modifications in `span` (of the given
/// collections, all when `None`), item by item in the order of their UUIDs,
/// each item's in time order, with their values; returns how many
/// modifications were read. An item in several of the collections comes
/// once, with its modifications in all of them.
pub fn stream_span(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    span: &Span,
    each: &mut dyn FnMut(Vec<Modification>) -> Result<()>,
) -> Result<usize> {
    let (main, ahead) = reads_of(span);
    let ahead = load_ahead(conn, collections, ahead)?;
    let colls = ColumnIds::of(conn, collections);
    let mut items = Items {
        ahead: ahead.into_iter().peekable(),
        item: Vec::new(),
        read: 0,
        each,
    };
    crate::db::stream_rows!(
        conn,
        B => value_rows!(B, main, colls),
        ValueRow,
        rows => items.take_rows(rows)?
    );
    items.finish()
}

/// Gathers the streamed modifications into items and hands each on.
struct Items<'a, A: Iterator<Item = Modification>> {
    /// What was recorded before the window and dated in it, in order.
    ahead: Peekable<A>,
    /// The item being gathered.
    item: Vec<Modification>,
    read: usize,
    each: &'a mut dyn FnMut(Vec<Modification>) -> Result<()>,
}

impl<A: Iterator<Item = Modification>> Items<'_, A> {
    /// Takes the rows of the main read, a modification's values in
    /// consecutive rows.
    fn take_rows(
        &mut self,
        rows: impl Iterator<Item = diesel::QueryResult<ValueRow>>,
    ) -> Result<()> {
        let mut cur: Option<Modification> = None;
        for row in rows {
            let (m, value) = row?;
            if cur.as_ref().is_none_or(|c| c.id.0 != m.0) {
                if let Some(done) = cur.take() {
                    self.push(done)?;
                }
                cur = Some(modification(m));
            }
            if let (Some(c), Some((attribute, old, new))) = (cur.as_mut(), value) {
                c.changes.push(Change {
                    attribute,
                    old,
                    new,
                });
            }
        }
        if let Some(done) = cur {
            self.push(done)?;
        }
        Ok(())
    }

    /// `m`, after every modification ahead of the window that comes
    /// before it.
    fn push(&mut self, m: Modification) -> Result<()> {
        while self.ahead.peek().is_some_and(|a| key(a) < key(&m)) {
            let a = self.ahead.next().expect("peeked");
            self.gather(a)?;
        }
        self.gather(m)
    }

    fn gather(&mut self, m: Modification) -> Result<()> {
        self.read += 1;
        if self
            .item
            .first()
            .is_some_and(|f| f.item_uuid != m.item_uuid)
        {
            (self.each)(std::mem::take(&mut self.item))?;
        }
        self.item.push(m);
        Ok(())
    }

    fn finish(mut self) -> Result<usize> {
        while let Some(a) = self.ahead.next() {
            self.gather(a)?;
        }
        if !self.item.is_empty() {
            (self.each)(std::mem::take(&mut self.item))?;
        }
        Ok(self.read)
    }
}

/// The log's order: item, time, order recorded.
fn key(m: &Modification) -> (&str, chrono::DateTime<chrono::Utc>, i64) {
    (&m.item_uuid, m.occurred_at, m.id.0)
}
