//! The report as plain text in the operator's language (`[i18n]
//! operator_locale`): its words from the catalogues (`report.ftl`), its
//! numbers and instants (UTC, to the second) as they are.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::Report;
use crate::i18n::{catalogs, Arg, Locale};

/// An instant as the report writes it (UTC, to the second), or the
/// catalogue's "never".
fn when(l: Locale, t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || catalogs().text(l, "report-never").to_string(),
        |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// The table's column headings, in `l`.
const COLUMNS: [&str; 7] = [
    "report-channel",
    "report-frequency",
    "report-due",
    "report-posted",
    "report-empty",
    "report-sent",
    "report-failed",
];

/// Writes one row of the table: the first two cells left-aligned, the
/// numbers right-aligned, each at least as wide as its heading (counted
/// in characters: a heading in Japanese is narrow in `char`s).
fn row(s: &mut String, widths: &[usize; 7], cells: [&str; 7]) {
    s.push(' ');
    for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
        let pad = w.saturating_sub(c.chars().count());
        s.push(' ');
        if i < 2 {
            s.push_str(c);
            s.extend(std::iter::repeat_n(' ', pad));
        } else {
            s.extend(std::iter::repeat_n(' ', pad));
            s.push_str(c);
        }
    }
    // No spaces at the end of a line.
    s.truncate(s.trim_end().len());
    s.push('\n');
}

impl Report {
    /// The digests' table: a row per channel and frequency, or "none due".
    fn table(&self, s: &mut String, l: Locale) {
        let c = catalogs();
        if self.digests.is_empty() {
            let _ = writeln!(s, "  {}", c.text(l, "report-none-due"));
            return;
        }
        let heads = COLUMNS.map(|k| c.text(l, k));
        // The widths the English report always had, or the heading's.
        let mut widths = [8, 9, 7, 7, 7, 7, 7];
        for (w, h) in widths.iter_mut().zip(heads) {
            *w = (*w).max(h.chars().count());
        }
        row(s, &widths, heads);
        for (ch, by) in &self.digests {
            for (f, d) in by {
                let n = [d.due, d.posted, d.empty, d.sent, d.failed].map(|n| n.to_string());
                row(s, &widths, [ch, f, &n[0], &n[1], &n[2], &n[3], &n[4]]);
            }
        }
    }

    /// The report as plain text in `l`, as the email carries it (`[i18n]
    /// operator_locale`; English by default).
    pub fn text(&self, l: Locale) -> String {
        let c = catalogs();
        let mut s = String::new();
        let (now, since) = (when(l, Some(self.at)), when(l, Some(self.since)));
        let _ = writeln!(
            s,
            "{}\n",
            c.format(
                l,
                "report-title",
                &[("version", Arg::Str(&self.version)), ("at", Arg::Str(&now))]
            )
        );
        let _ = writeln!(
            s,
            "{}",
            c.format(l, "report-digests-since", &[("since", Arg::Str(&since))])
        );
        self.table(&mut s, l);
        let num = |n: i64| Arg::Num(usize::try_from(n).unwrap_or(0));
        let _ = writeln!(
            s,
            "\n{}",
            c.format(
                l,
                "report-bounces",
                &[
                    ("hard", num(self.bounces_hard)),
                    ("soft", num(self.bounces_soft)),
                    ("disabled", num(self.addresses_disabled)),
                ]
            )
        );
        let _ = writeln!(
            s,
            "{}",
            c.format(l, "report-retries", &[("count", num(self.retries_pending))])
        );
        let oldest = match &self.oldest_unfinished {
            Some(o) => c.format(
                l,
                "report-oldest",
                &[
                    ("id", Arg::Str(&o.request_id.to_string())),
                    ("status", Arg::Str(&o.status)),
                    ("at", Arg::Str(&when(l, Some(o.requested_at)))),
                ],
            ),
            None => c.text(l, "report-oldest-none").to_string(),
        };
        let _ = writeln!(s, "{oldest}");
        let tick = when(l, self.latest_tick);
        let _ = writeln!(
            s,
            "{}",
            c.format(l, "report-latest-tick", &[("at", Arg::Str(&tick))])
        );
        let run = match &self.latest_run {
            Some(r) => c.format(
                l,
                "report-latest-run",
                &[
                    ("subscription", Arg::Str(&r.subscription_id.to_string())),
                    ("period", Arg::Str(&r.period)),
                    ("due", Arg::Str(&when(l, Some(r.scheduled_at)))),
                    ("sent", Arg::Str(&when(l, Some(r.sent_at)))),
                    ("late", Arg::Str(&r.late_seconds.to_string())),
                ],
            ),
            None => c.text(l, "report-latest-run-none").to_string(),
        };
        let _ = writeln!(s, "{run}");
        for lease in &self.leases {
            let _ = writeln!(
                s,
                "{}",
                c.format(
                    l,
                    "report-lease",
                    &[
                        ("job", Arg::Str(&lease.job)),
                        (
                            "holder",
                            Arg::Str(
                                lease
                                    .holder
                                    .as_deref()
                                    .unwrap_or(c.text(l, "report-nobody"))
                            )
                        ),
                        ("at", Arg::Str(&when(l, lease.last_run))),
                    ]
                )
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DigestCounts, LatestRun, LeaseRow, Oldest};
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    /// A report with one row of each kind (numbers made up, distinct so a
    /// column mix-up shows).
    fn report() -> Report {
        let counts = DigestCounts {
            due: 4,
            posted: 3,
            empty: 1,
            sent: 2,
            failed: 5,
        };
        Report {
            version: "9.9.9".into(),
            at: t("2026-11-23T09:30:00Z"),
            since: t("2026-11-22T09:30:00Z"),
            digests: [("email".to_string(), [("daily".to_string(), counts)].into())].into(),
            bounces_hard: 1,
            bounces_soft: 2,
            addresses_disabled: 3,
            retries_pending: 6,
            oldest_unfinished: Some(Oldest {
                request_id: 17,
                status: "sending".into(),
                requested_at: t("2026-11-23T07:00:00Z"),
            }),
            latest_tick: None,
            latest_run: Some(LatestRun {
                subscription_id: 8,
                period: "2026-11-23".into(),
                scheduled_at: t("2026-11-23T07:00:00Z"),
                sent_at: t("2026-11-23T07:05:00Z"),
                late_seconds: 300,
            }),
            leases: vec![LeaseRow {
                job: "tick".into(),
                holder: None,
                last_run: None,
            }],
        }
    }

    #[test]
    fn english_reads_as_it_always_did() {
        let s = report().text(Locale::En);
        assert!(
            s.starts_with("digestd 9.9.9 report at 2026-11-23 09:30:00 UTC\n\n"),
            "{s}"
        );
        assert!(
            s.contains("\n  channel  frequency     due  posted   empty    sent  failed\n"),
            "{s}"
        );
        assert!(
            s.contains("\n  email    daily           4       3       1       2       5\n"),
            "{s}"
        );
        assert!(s.contains("Bounces: 1 hard, 2 soft; addresses disabled: 3\nRetries pending: 6\n"));
        assert!(
            s.contains("Oldest unfinished request: 17 (sending), posted 2026-11-23 07:00:00 UTC")
        );
        assert!(s.contains("Latest tick: never\n"), "{s}");
        assert!(s.contains("(300 s late)"));
        assert!(
            s.ends_with("Lease tick: held by nobody; last run never\n"),
            "{s}"
        );
    }

    #[test]
    fn the_operators_language_with_columns_as_wide_as_their_headings() {
        let s = report().text(Locale::De);
        assert!(
            s.starts_with("digestd 9.9.9, Bericht vom 2026-11-23 09:30:00 UTC\n"),
            "{s}"
        );
        assert!(
            s.contains("\n  Kanal    Frequenz   fällig erstellt    leer gesendet gescheitert\n"),
            "{s}"
        );
        assert!(
            s.contains("\n  email    daily           4        3       1        2           5\n"),
            "{s}"
        );
        assert!(s.contains("Unzustellbar: 1 dauerhaft, 2 vorübergehend; deaktivierte Adressen: 3"));
        assert!(s.contains("Ausstehende Wiederholungen: 6\n"));
        assert!(s.contains("Letzter Tick: nie\n"), "{s}");
        assert!(
            s.ends_with("Sperre tick: gehalten von niemandem; zuletzt gelaufen nie\n"),
            "{s}"
        );
        let s = report().text(Locale::Ja);
        assert!(s.contains("再試行待ち: 6 件\n"), "{s}");
        assert!(s.contains("(300 秒遅れ)"), "{s}");
        for l in Locale::ALL {
            let s = report().text(l);
            assert!(
                !s.contains("report-") && !s.contains('{'),
                "{}: {s}",
                l.tag()
            );
        }
    }
}
