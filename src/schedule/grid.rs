//! The week grid of the Cosmo proposal: 7 days × 24 hours = 168 buckets.
//! `Bucket(weekday × 24 + hour)`, Monday = 0. A [`WeekGrid`] maps buckets to
//! subscriptions; `digestd grid` fills one per view (each user's local
//! time, or server time = UTC) from the periods due in one week, to show
//! when the load peaks.
//!
//! The tick does not scan buckets: it reads `subscriptions.next_due_at`, the
//! same grid unrolled in time (see `tick`), so DST changes never need a
//! rebuild and the cost of a tick follows the number of due subscriptions.

use std::fmt::Write;

use chrono::{DateTime, Datelike, Duration, NaiveDateTime, Timelike, Utc};

use crate::ids::SubscriptionId;

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

/// Bucket → subscriptions.
#[derive(Debug, Clone)]
pub struct WeekGrid {
    cells: Vec<Vec<SubscriptionId>>,
}

impl Default for WeekGrid {
    fn default() -> Self {
        WeekGrid {
            cells: vec![Vec::new(); Bucket::COUNT],
        }
    }
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

impl WeekGrid {
    pub fn insert(&mut self, b: Bucket, sub: SubscriptionId) {
        self.cells[b.index()].push(sub);
    }

    pub fn count(&self, b: Bucket) -> usize {
        self.cells[b.index()].len()
    }

    pub fn total(&self) -> usize {
        self.cells.iter().map(Vec::len).sum()
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

    /// A 7 × 24 table of counts.
    pub fn to_text(&self, title: &str) -> String {
        let width = self.peak().1.to_string().len().max(2);
        let mut s = format!("{title}\n     ");
        for h in 0..24 {
            let _ = write!(s, " {h:>width$}");
        }
        s.push_str("   total\n");
        for (d, name) in DAYS.iter().enumerate() {
            let _ = write!(s, "{name}  ");
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
        let (b, n) = self.peak();
        let _ = writeln!(
            s,
            "peak: {} {:02}:00 with {n} of {} digests",
            DAYS[usize::from(b.weekday())],
            b.hour(),
            self.total()
        );
        s
    }

    /// An SVG heat map: one row per day, one column per hour, darker = more.
    pub fn to_svg(&self, title: &str) -> String {
        let (cw, ch, left, top) = (34, 26, 44, 48);
        let max = self.peak().1.max(1) as f64;
        let (w, h) = (left + 24 * cw + 10, top + 7 * ch + 30);
        let mut s = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
        );
        let _ = write!(
            s,
            r#"<rect width="{w}" height="{h}" fill="white"/><text x="{left}" y="20" font-size="14">{}</text>"#,
            xml_escape(title)
        );
        for hour in 0..24 {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{hour:02}</text>"#,
                left + hour * cw + cw / 2,
                top - 8
            );
        }
        for (d, name) in DAYS.iter().enumerate() {
            let y = top + d * ch;
            let _ = write!(s, r#"<text x="6" y="{}">{name}</text>"#, y + ch / 2 + 4);
            for hour in 0..24u8 {
                let n = self.count(Bucket::new(d as u8, hour).expect("in range"));
                let f = n as f64 / max;
                // White to deep blue.
                let (r, g, b) = (255.0 - 225.0 * f, 255.0 - 170.0 * f, 255.0 - 60.0 * f);
                let x = left + usize::from(hour) * cw;
                let _ = write!(
                    s,
                    r#"<rect x="{x}" y="{y}" width="{}" height="{}" fill="rgb({:.0},{:.0},{:.0})" stroke="rgb(221,221,221)"><title>{name} {hour:02}:00: {n}</title></rect>"#,
                    cw - 1,
                    ch - 1,
                    r,
                    g,
                    b
                );
                if n > 0 {
                    let fill = if f > 0.5 { "white" } else { "black" };
                    let _ = write!(
                        s,
                        r#"<text x="{}" y="{}" text-anchor="middle" fill="{fill}">{n}</text>"#,
                        x + cw / 2,
                        y + ch / 2 + 4
                    );
                }
            }
        }
        let (b, n) = self.peak();
        let _ = write!(
            s,
            r#"<text x="{left}" y="{}">peak: {} {:02}:00 with {n} of {} digests</text></svg>"#,
            top + 7 * ch + 20,
            DAYS[usize::from(b.weekday())],
            b.hour(),
            self.total()
        );
        s
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The Monday 00:00 UTC that starts the week containing `t`.
pub fn week_start_utc(t: DateTime<Utc>) -> DateTime<Utc> {
    let d = t.date_naive() - Duration::days(i64::from(t.weekday().num_days_from_monday()));
    d.and_hms_opt(0, 0, 0).expect("midnight").and_utc()
}

/// Fills two grids, local time and server time (UTC), with every period of
/// every active subscription (or one party's) scheduled in the UTC week
/// containing `week`.
pub fn build(
    conn: &mut crate::db::DbConn,
    week: DateTime<Utc>,
    party: Option<crate::ids::PartyId>,
) -> crate::error::Result<(WeekGrid, WeekGrid)> {
    use crate::db::schema::{subscriptions as s, users as u};
    use diesel::prelude::*;
    type Row = (i64, String, Option<i32>, Option<i32>, Option<(String, i32)>);
    let mut q = s::table
        .left_join(u::table.on(u::party_id.eq(s::party_id)))
        .filter(s::paused.eq(false))
        .select((
            s::id,
            s::frequency,
            s::hour_of_day,
            s::day_of_week,
            (u::timezone, u::week_start).nullable(),
        ))
        .into_boxed();
    if let Some(p) = party {
        q = q.filter(s::party_id.eq(p.0));
    }
    let rows: Vec<Row> = q.load(conn)?;
    let start = week_start_utc(week);
    let end = start + Duration::days(7);
    let (mut local, mut server) = (WeekGrid::default(), WeekGrid::default());
    for (id, freq, hour, day, user) in rows {
        let freq = crate::subscriptions::Frequency::parse(&freq)?;
        let rule = super::tick::rule_for(
            freq,
            hour,
            day,
            user.as_ref().map(|(t, w)| (t.as_str(), *w)),
        )?;
        let mut p = rule.first_after(start - Duration::microseconds(1));
        while p.scheduled < end {
            local.insert(
                Bucket::of(p.scheduled_local(rule.tz).naive_local()),
                SubscriptionId(id),
            );
            server.insert(Bucket::of(p.scheduled.naive_utc()), SubscriptionId(id));
            p = rule.first_after(p.scheduled);
        }
    }
    Ok((local, server))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_candidates_wrap_around_the_week() {
        let t = chrono::NaiveDate::from_ymd_opt(2026, 11, 22)
            .unwrap()
            .and_hms_opt(23, 30, 0)
            .unwrap();
        assert_eq!(Bucket::of(t), Bucket::new(6, 23).unwrap()); // a Sunday
        assert_eq!(Bucket::of(t).index(), 167);
        assert!(Bucket::new(7, 0).is_none() && Bucket::new(0, 24).is_none());
        let mut g = WeekGrid::default();
        g.insert(Bucket::new(0, 0).unwrap(), SubscriptionId(1));
        g.insert(Bucket::new(6, 23).unwrap(), SubscriptionId(2));
        g.insert(Bucket::new(3, 12).unwrap(), SubscriptionId(3));
        let got: Vec<i64> = g
            .candidates(Bucket::new(6, 22).unwrap(), Bucket::new(0, 0).unwrap())
            .map(|s| s.0)
            .collect();
        assert_eq!(got, [2, 1]);
        assert_eq!(
            g.candidates(Bucket::new(0, 0).unwrap(), Bucket::new(0, 0).unwrap())
                .count(),
            0
        );
        assert_eq!(g.peak().1, 1);
        let text = g.to_text("t");
        assert!(
            text.contains("peak: Mon 00:00 with 1 of 3 digests"),
            "{text}"
        );
        assert!(g.to_svg("a <b>").contains("a &lt;b&gt;"));
    }
}
