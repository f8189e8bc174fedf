//! The week grid of the Cosmo proposal: 7 days × 24 hours = 168 buckets.
//! `Bucket(weekday × 24 + hour)`, Monday = 0. A [`WeekGrid`] maps buckets to
//! subscriptions; `digestd grid` fills one per view (each user's local
//! time, or server time = UTC) from the periods due in one week, to show
//! when the load peaks.
//!
//! The tick does not scan buckets: it reads `subscriptions.next_due_at`, the
//! same grid unrolled in time (see `tick`), so DST changes never need a
//! rebuild and the cost of a tick follows the number of due subscriptions.

mod words;

use std::fmt::Write;

use chrono::{DateTime, Datelike, Duration, NaiveDateTime, Timelike, Utc};

use crate::ids::SubscriptionId;

pub use words::{English, GridWords};

/// One hour of the week: weekday (0 = Monday) × 24 + hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bucket(u8);

impl Bucket {
    pub const COUNT: usize = 168;

    pub fn new(weekday: u8, hour: u8) -> Option<Self> {
        (weekday < 7 && hour < 24).then_some(Bucket(weekday * 24 + hour))
    }

    /// The bucket a wall-clock time falls in.
    pub fn of(t: NaiveDateTime) -> Self {
        Bucket(t.weekday().num_days_from_monday() as u8 * 24 + t.hour() as u8)
    }

    pub fn index(self) -> usize {
        usize::from(self.0)
    }
    pub fn weekday(self) -> u8 {
        self.0 / 24
    }
    pub fn hour(self) -> u8 {
        self.0 % 24
    }
}

/// Bucket → subscriptions whose runs post (or, not yet run, may post) a
/// digest; and per bucket the runs that already ran with nothing to send
/// ("empty runs"), counted apart so that they do not pass for load.
#[derive(Debug, Clone)]
pub struct WeekGrid {
    cells: Vec<Vec<SubscriptionId>>,
    empty: Vec<usize>,
}

impl Default for WeekGrid {
    fn default() -> Self {
        WeekGrid {
            cells: vec![Vec::new(); Bucket::COUNT],
            empty: vec![0; Bucket::COUNT],
        }
    }
}

/// Which clock a grid's hours are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridTime {
    /// Each subscriber's own zone (a user's or a group's).
    Local,
    /// The server's clock, UTC.
    Server,
}

impl GridTime {
    pub fn parse(s: &str) -> crate::error::Result<GridTime> {
        match s {
            "local" => Ok(GridTime::Local),
            "server" | "utc" => Ok(GridTime::Server),
            other => Err(crate::error::Error::invalid(format!(
                "time: {} is not local or server",
                crate::validate::escape_for_line(other)
            ))),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            GridTime::Local => "local",
            GridTime::Server => "server",
        }
    }
    /// How the grid's hours read: "local time", "server time (UTC)".
    pub fn label(self) -> &'static str {
        match self {
            GridTime::Local => "local time",
            GridTime::Server => "server time (UTC)",
        }
    }
}

/// The fill of a cell holding `n` of at most `max`: white to deep blue.
fn shade(n: usize, max: usize) -> String {
    let f = n as f64 / max.max(1) as f64;
    let (r, g, b) = (255.0 - 225.0 * f, 255.0 - 170.0 * f, 255.0 - 60.0 * f);
    format!("rgb({r:.0},{g:.0},{b:.0})")
}

/// The counts the legend shows: 0, a quarter, half, three quarters and the
/// peak, without repeats (a peak of 1 has two steps).
fn legend_steps(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=4).map(|k| (max * k + 2) / 4).collect();
    v.dedup();
    v
}

const EMPTY_FILL: &str = "rgb(150,150,150)";

impl WeekGrid {
    pub fn insert(&mut self, b: Bucket, sub: SubscriptionId) {
        self.cells[b.index()].push(sub);
    }

    /// A run in `b` that ran and had nothing to send.
    pub(crate) fn insert_empty(&mut self, b: Bucket) {
        self.empty[b.index()] += 1;
    }

    pub fn count(&self, b: Bucket) -> usize {
        self.cells[b.index()].len()
    }

    /// Empty runs in `b`.
    pub fn empty(&self, b: Bucket) -> usize {
        self.empty[b.index()]
    }

    pub fn total(&self) -> usize {
        self.cells.iter().map(Vec::len).sum()
    }

    pub(crate) fn total_empty(&self) -> usize {
        self.empty.iter().sum()
    }

    /// Subscriptions in the buckets after `from` up to and including `to`,
    /// wrapping around the end of the week: what a tick at `to` must look
    /// at when the previous tick was at `from`.
    pub fn candidates(
        &self,
        from: Bucket,
        to: Bucket,
    ) -> impl Iterator<Item = SubscriptionId> + '_ {
        let n = (to.index() + Bucket::COUNT - from.index()) % Bucket::COUNT;
        (1..=n).flat_map(move |k| {
            self.cells[(from.index() + k) % Bucket::COUNT]
                .iter()
                .copied()
        })
    }

    /// The fullest bucket and its count.
    pub fn peak(&self) -> (Bucket, usize) {
        (0..Bucket::COUNT as u8)
            .map(|i| (Bucket(i), self.cells[usize::from(i)].len()))
            .max_by_key(|(b, n)| (*n, std::cmp::Reverse(*b)))
            .expect("168 buckets")
    }

    fn peak_line(&self, w: &dyn GridWords) -> String {
        let (b, n) = self.peak();
        w.peak(&w.day(usize::from(b.weekday())), b.hour(), n, self.total())
    }

    fn empty_line(&self, w: &dyn GridWords) -> String {
        w.empty_runs(self.total_empty())
    }

    /// A 7 × 24 table of counts, in English (`digestd grid`).
    pub fn to_text(&self, title: &str) -> String {
        self.to_text_in(title, &English)
    }

    /// A 7 × 24 table of counts in `w`'s words; the days' names are padded
    /// to the longest, by the columns a terminal gives them ([`columns`]).
    pub fn to_text_in(&self, title: &str, w: &dyn GridWords) -> String {
        let width = self.peak().1.to_string().len().max(2);
        let days: Vec<_> = (0..7).map(|d| w.day(d)).collect();
        let dw = days.iter().map(|d| columns(d)).max().unwrap_or(3);
        let mut s = format!("{title}\n{:dw$}  ", "");
        for h in 0..24 {
            let _ = write!(s, " {h:>width$}");
        }
        let _ = writeln!(s, "   {}", w.total());
        for (d, name) in days.iter().enumerate() {
            let pad = dw - columns(name);
            let _ = write!(s, "{name}{:pad$}  ", "");
            let mut total = 0;
            for h in 0..24 {
                let n = self.count(Bucket::new(d as u8, h).expect("in range"));
                total += n;
                if n == 0 {
                    let _ = write!(s, " {:>width$}", ".");
                } else {
                    let _ = write!(s, " {n:>width$}");
                }
            }
            let _ = writeln!(s, "   {total}");
        }
        let _ = writeln!(s, "{}", self.peak_line(w));
        if self.total_empty() > 0 {
            let _ = writeln!(s, "{}", self.empty_line(w));
        }
        s
    }

    /// [`WeekGrid::to_svg_in`] in English (`digestd grid --svg`).
    pub fn to_svg(&self, title: &str, time: GridTime) -> String {
        self.to_svg_in(title, time, &English)
    }

    /// An SVG heat map: one row per day, one column per hour of `time`,
    /// darker = more digests, with axis labels and a legend (the colour
    /// scale with its counts; the grey dot of empty runs, which are not
    /// counted). Every text is escaped; a standalone, well-formed XML
    /// document that can also sit inline in an HTML page. Its words are
    /// `words`'.
    pub fn to_svg_in(&self, title: &str, time: GridTime, words: &dyn GridWords) -> String {
        let (cw, ch, left, top) = (34, 26, 48, 70);
        let max = self.peak().1;
        let grid_bottom = top + 7 * ch;
        let (w, h) = (left + 24 * cw + 10, grid_bottom + 118);
        let label = xml_escape(&words.time(time));
        let mut s = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11" role="img" aria-label="{}">"#,
            xml_escape(title)
        );
        let _ = write!(
            s,
            r#"<title>{t}</title><rect width="{w}" height="{h}" fill="white"/><text x="{left}" y="20" font-size="14">{t}</text><text x="{left}" y="38" fill="rgb(80,80,80)">{sub}</text>"#,
            t = xml_escape(title),
            sub = xml_escape(&words.subtitle(&words.time(time))),
        );
        for hour in 0..24 {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{hour:02}</text>"#,
                left + hour * cw + cw / 2,
                top - 8
            );
        }
        for d in 0..7 {
            let name = xml_escape(&words.day(d));
            let y = top + d * ch;
            let _ = write!(s, r#"<text x="6" y="{}">{name}</text>"#, y + ch / 2 + 4);
            for hour in 0..24u8 {
                let b = Bucket::new(d as u8, hour).expect("in range");
                let (n, e) = (self.count(b), self.empty(b));
                let x = left + usize::from(hour) * cw;
                let _ = write!(
                    s,
                    r#"<rect x="{x}" y="{y}" width="{}" height="{}" fill="{}" stroke="rgb(221,221,221)"><title>{}</title></rect>"#,
                    cw - 1,
                    ch - 1,
                    shade(n, max),
                    xml_escape(&words.cell(&words.day(d), hour, &words.time(time), n, e)),
                );
                if n > 0 {
                    let fill = if n * 2 > max { "white" } else { "black" };
                    let _ = write!(
                        s,
                        r#"<text x="{}" y="{}" text-anchor="middle" fill="{fill}">{n}</text>"#,
                        x + cw / 2,
                        y + ch / 2 + 4
                    );
                }
                if e > 0 {
                    let _ = write!(
                        s,
                        r#"<circle class="empty" cx="{}" cy="{}" r="3.5" fill="{EMPTY_FILL}"><title>{}</title></circle>"#,
                        x + cw - 6,
                        y + 6,
                        xml_escape(&words.dot(e)),
                    );
                }
            }
        }
        // Axis titles.
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" fill="rgb(80,80,80)">{}</text>"#,
            left + 12 * cw,
            grid_bottom + 16,
            xml_escape(&words.hour_axis(&words.time(time))),
        );
        let _ = write!(
            s,
            r#"<text x="6" y="{}" fill="rgb(80,80,80)">{}</text>"#,
            top - 8,
            xml_escape(&words.day_axis()),
        );
        self.legend(&mut s, (left, grid_bottom + 34), max, &label, words);
        s
    }

    /// The legend below the grid, from `ly` down: the colour scale up to
    /// `max`, the empty-run dot, the peak.
    fn legend(
        &self,
        s: &mut String,
        (left, ly): (usize, usize),
        max: usize,
        label: &str,
        words: &dyn GridWords,
    ) {
        let _ = write!(
            s,
            r#"<g class="legend"><text x="{left}" y="{}">{}</text>"#,
            ly + 14,
            xml_escape(&words.scale()),
        );
        let mut x = left + 110;
        for n in legend_steps(max) {
            let _ = write!(
                s,
                r#"<rect x="{x}" y="{ly}" width="22" height="18" fill="{}" stroke="rgb(160,160,160)"/><text x="{}" y="{}">{n}</text>"#,
                shade(n, max),
                x + 27,
                ly + 14
            );
            x += 62;
        }
        let _ = write!(
            s,
            r#"<circle cx="{}" cy="{}" r="3.5" fill="{EMPTY_FILL}"/><text x="{}" y="{}">{}</text></g>"#,
            left + 6,
            ly + 36,
            left + 16,
            ly + 40,
            xml_escape(&self.empty_line(words))
        );
        let _ = write!(
            s,
            r#"<text x="{left}" y="{}">{} ({label})</text></svg>"#,
            ly + 62,
            xml_escape(&self.peak_line(words)),
        );
    }
}

/// Text for XML: the five specials escaped, and the characters XML 1.0
/// cannot hold at all (C0 controls but tab and line breaks, lone
/// surrogates cannot occur in `str`, U+FFFE/U+FFFF) left out.
fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// The Monday 00:00 UTC that starts the week containing `t`.
pub fn week_start_utc(t: DateTime<Utc>) -> DateTime<Utc> {
    let d = t.date_naive() - Duration::days(i64::from(t.weekday().num_days_from_monday()));
    d.and_hms_opt(0, 0, 0).expect("midnight").and_utc()
}

/// The groups `party` is in, directly or through other groups (each once,
/// safe against stored cycles).
fn groups_of(
    conn: &mut crate::db::DbConn,
    party: crate::ids::PartyId,
) -> crate::error::Result<Vec<i64>> {
    use crate::db::schema::memberships as m;
    use diesel::prelude::*;
    let mut seen = std::collections::HashSet::new();
    let mut frontier = vec![party.0];
    while !frontier.is_empty() {
        let up: Vec<i64> = m::table
            .filter(m::member_id.eq_any(&frontier))
            .select(m::group_id)
            .load(conn)?;
        frontier = up.into_iter().filter(|g| seen.insert(*g)).collect();
    }
    Ok(seen.into_iter().collect())
}

/// Fills two grids, local time and server time (UTC), with every period of
/// every active subscription scheduled in the UTC week containing `week`.
/// With `party`, that party's subscriptions and those of every group it
/// is in. A period that already ran without posting anything (nothing
/// changed) is an empty run, counted apart; one that posted, or has not
/// run yet, counts as a digest. A group's subscription counts once (one
/// request, however many members it reaches).
pub fn build(
    conn: &mut crate::db::DbConn,
    week: DateTime<Utc>,
    party: Option<crate::ids::PartyId>,
) -> crate::error::Result<(WeekGrid, WeekGrid)> {
    use crate::db::schema::{
        group_prefs as g, subscription_runs as r, subscriptions as s, users as u,
    };
    use diesel::prelude::*;
    type Zone = Option<(String, i32)>;
    type Row = (i64, String, Option<i32>, Option<i32>, Zone, Zone);
    let mut q = s::table
        .left_join(u::table.on(u::party_id.eq(s::party_id)))
        .left_join(g::table.on(g::party_id.eq(s::party_id)))
        .filter(s::paused.eq(false))
        .select((
            s::id,
            s::frequency,
            s::hour_of_day,
            s::day_of_week,
            (u::timezone, u::week_start).nullable(),
            (g::timezone, g::week_start).nullable(),
        ))
        .into_boxed();
    if let Some(p) = party {
        let mut parties = groups_of(conn, p)?;
        parties.push(p.0);
        q = q.filter(s::party_id.eq_any(parties));
    }
    let rows: Vec<Row> = q.load(conn)?;
    let start = week_start_utc(week);
    let end = start + Duration::days(7);
    let ids: Vec<i64> = rows.iter().map(|row| row.0).collect();
    let mut empty_runs = std::collections::HashSet::new();
    for chunk in ids.chunks(10_000) {
        let ran: Vec<(i64, NaiveDateTime)> = r::table
            .filter(r::subscription_id.eq_any(chunk))
            .filter(r::scheduled_at.ge(start.naive_utc()))
            .filter(r::scheduled_at.lt(end.naive_utc()))
            .filter(r::request_id.is_null())
            .select((r::subscription_id, r::scheduled_at))
            .load(conn)?;
        empty_runs.extend(ran);
    }
    let (mut local, mut server) = (WeekGrid::default(), WeekGrid::default());
    for (id, freq, hour, day, user, group) in rows {
        let freq = crate::subscriptions::Frequency::parse(&freq)?;
        let rule = super::tick::rule_for(
            freq,
            hour,
            day,
            user.or(group).as_ref().map(|(t, w)| (t.as_str(), *w)),
        )?;
        let mut p = rule.first_after(start - Duration::microseconds(1));
        while p.scheduled < end {
            let lb = Bucket::of(p.scheduled_local(rule.tz).naive_local());
            let sb = Bucket::of(p.scheduled.naive_utc());
            if empty_runs.contains(&(id, p.scheduled.naive_utc())) {
                local.insert_empty(lb);
                server.insert_empty(sb);
            } else {
                local.insert(lb, SubscriptionId(id));
                server.insert(sb, SubscriptionId(id));
            }
            p = rule.first_after(p.scheduled);
        }
    }
    Ok((local, server))
}

/// The columns `s` takes in a terminal: two for each East Asian wide or
/// full-width character (`月`, `ｶ`'s full-width forms, Hangul), one for
/// the others. Enough for day names; not a full `wcwidth`.
fn columns(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let wide = matches!(c as u32,
                0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF
                | 0x4E00..=0x9FFF | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
                | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6);
            1 + usize::from(wide)
        })
        .sum()
}

#[cfg(test)]
mod tests;
