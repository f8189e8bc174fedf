//! `VTIMEZONE` from chrono-tz's data: no yearly rules, one observance
//! (`STANDARD` or `DAYLIGHT`) per change of offset, with its actual
//! instant and offsets, which RFC 5545 allows (§3.6.5: an observance
//! without `RRULE` holds from its onset to the next one).
//!
//! The spans of time a calendar writes instants in are joined when less
//! than [`JOIN_DAYS`] apart; each span gets an
//! observance that starts at its first instant with the offset then in
//! force, and one for every change of offset inside it. So every instant
//! written is read with its own offset, and a series that began years
//! before the window costs two spans, not an observance for every year
//! between.

use chrono::{DateTime, Duration, Offset, TimeZone, Timelike, Utc};
use chrono_tz::{OffsetComponents, OffsetName, Tz};

use super::{escape_text, local, Out};

/// Instants closer than this share one span.
const JOIN_DAYS: i64 = 400;
/// How far the scan for changes of offset steps. No zone changes its
/// offset twice within a week and back (a pair that did would be missed).
const STEP_DAYS: i64 = 7;

/// One observance: its onset, the offsets before and after, whether it is
/// daylight time and its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Observance {
    onset: DateTime<Utc>,
    from: i32,
    to: i32,
    daylight: bool,
    name: Option<String>,
}

/// Seconds east of UTC in `tz` at `t`.
fn offset(tz: Tz, t: DateTime<Utc>) -> i32 {
    tz.offset_from_utc_datetime(&t.naive_utc())
        .fix()
        .local_minus_utc()
}

/// The observance that begins at `t`, the offset before it being `from`.
fn at(tz: Tz, t: DateTime<Utc>, from: i32) -> Observance {
    let o = tz.offset_from_utc_datetime(&t.naive_utc());
    Observance {
        onset: t,
        from,
        to: o.fix().local_minus_utc(),
        daylight: !o.dst_offset().is_zero(),
        name: o.abbreviation().map(str::to_string),
    }
}

/// The first instant after `lo` whose offset differs from `lo`'s, given
/// that `hi`'s does.
fn change(tz: Tz, mut lo: DateTime<Utc>, mut hi: DateTime<Utc>) -> DateTime<Utc> {
    let before = offset(tz, lo);
    while hi - lo > Duration::seconds(1) {
        let mid = lo + (hi - lo) / 2;
        if offset(tz, mid) == before {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The observances covering `[from, to]`: the one in force at `from`
/// (onset `from`, to the minute) and every change of offset after it.
fn span(tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>, out: &mut Vec<Observance>) {
    let from = from.with_second(0).and_then(|t| t.with_nanosecond(0));
    let Some(from) = from else { return };
    let start = offset(tz, from);
    out.push(at(tz, from, start));
    let mut t = from;
    while t < to {
        let next = (t + Duration::days(STEP_DAYS)).min(to);
        let before = offset(tz, t);
        if offset(tz, next) == before {
            t = next;
        } else {
            let c = change(tz, t, next);
            out.push(at(tz, c, before));
            t = c;
        }
    }
}

/// A span of time a zone's offsets are described over, ends included.
pub(super) type Span = (DateTime<Utc>, DateTime<Utc>);

/// Writes the `VTIMEZONE` of `tz` over `spans` (sorted and joined here
/// when less than [`JOIN_DAYS`] apart).
pub(super) fn vtimezone(out: &mut Out, tz: Tz, spans: &mut [Span]) {
    spans.sort_unstable();
    let mut obs = Vec::new();
    let mut i = 0;
    while i < spans.len() {
        let (from, mut to) = spans[i];
        let mut j = i + 1;
        while j < spans.len() && spans[j].0 - to < Duration::days(JOIN_DAYS) {
            to = to.max(spans[j].1);
            j += 1;
        }
        span(tz, from, to, &mut obs);
        i = j;
    }
    obs.sort();
    obs.dedup();
    out.line("BEGIN", "VTIMEZONE");
    out.line("TZID", &escape_text(tz.name()));
    for o in &obs {
        write(out, o);
    }
    out.line("END", "VTIMEZONE");
}

fn write(out: &mut Out, o: &Observance) {
    let kind = if o.daylight { "DAYLIGHT" } else { "STANDARD" };
    out.line("BEGIN", kind);
    // The onset in the local time before it (RFC 5545 §3.8.2.4).
    out.line(
        "DTSTART",
        &local(o.onset.naive_utc() + Duration::seconds(o.from.into())),
    );
    out.line("TZOFFSETFROM", &utc_offset(o.from));
    out.line("TZOFFSETTO", &utc_offset(o.to));
    if let Some(n) = &o.name {
        out.line("TZNAME", &escape_text(n));
    }
    out.line("END", kind);
}

/// `+0100`, `-0500`, `+0053` … and seconds when there are some (`+005328`,
/// a local mean time).
pub(super) fn utc_offset(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let s = secs.unsigned_abs();
    let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
    if sec == 0 {
        format!("{sign}{h:02}{m:02}")
    } else {
        format!("{sign}{h:02}{m:02}{sec:02}")
    }
}
