//! The words a week grid is drawn with. `digestd grid` draws it in
//! [`English`], always (its output is read by scripts and pasted into
//! reports); the operator's pages draw it in the operator's language with
//! words of their own (the HTTP crate's catalogue-backed implementation).

use std::borrow::Cow;

use super::GridTime;

/// The names and sentences of a drawn grid. Every text is escaped by the
/// drawing (XML for the SVG); an implementation returns plain text.
pub trait GridWords {
    /// The short name of weekday `d` (0 = Monday).
    fn day(&self, d: usize) -> Cow<'_, str>;
    /// How the grid's hours read: "local time", "server time (UTC)".
    fn time(&self, t: GridTime) -> Cow<'_, str>;
    /// The line under the title: "Digests per hour of the week, {time}".
    fn subtitle(&self, time: &str) -> String;
    /// A cell's tooltip: "Mon 07:00 local time: 1 digests, 0 empty runs".
    fn cell(&self, day: &str, hour: u8, time: &str, digests: usize, empty: usize) -> String;
    /// The tooltip of a cell's empty-run dot: "2 empty runs".
    fn dot(&self, empty: usize) -> String;
    /// The hours' axis: "hour of the day ({time})".
    fn hour_axis(&self, time: &str) -> String;
    /// The days' axis: "day".
    fn day_axis(&self) -> Cow<'_, str>;
    /// The colour scale's label: "digests per hour:".
    fn scale(&self) -> Cow<'_, str>;
    /// "{n} empty runs (ran, nothing to send) not counted".
    fn empty_runs(&self, n: usize) -> String;
    /// "peak: Mon 12:00 with 2 of 12 digests".
    fn peak(&self, day: &str, hour: u8, digests: usize, total: usize) -> String;
    /// The table's last column: "total".
    fn total(&self) -> Cow<'_, str>;
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// `digestd grid`'s words: English, as they always read.
pub struct English;

impl GridWords for English {
    fn day(&self, d: usize) -> Cow<'_, str> {
        Cow::Borrowed(DAYS[d % 7])
    }
    fn time(&self, t: GridTime) -> Cow<'_, str> {
        Cow::Borrowed(t.label())
    }
    fn subtitle(&self, time: &str) -> String {
        format!("Digests per hour of the week, {time}")
    }
    fn cell(&self, day: &str, hour: u8, time: &str, digests: usize, empty: usize) -> String {
        format!("{day} {hour:02}:00 {time}: {digests} digests, {empty} empty runs")
    }
    fn dot(&self, empty: usize) -> String {
        format!("{empty} empty runs")
    }
    fn hour_axis(&self, time: &str) -> String {
        format!("hour of the day ({time})")
    }
    fn day_axis(&self) -> Cow<'_, str> {
        Cow::Borrowed("day")
    }
    fn scale(&self) -> Cow<'_, str> {
        Cow::Borrowed("digests per hour:")
    }
    fn empty_runs(&self, n: usize) -> String {
        format!("{n} empty runs (ran, nothing to send) not counted")
    }
    fn peak(&self, day: &str, hour: u8, digests: usize, total: usize) -> String {
        format!("peak: {day} {hour:02}:00 with {digests} of {total} digests")
    }
    fn total(&self) -> Cow<'_, str> {
        Cow::Borrowed("total")
    }
}
