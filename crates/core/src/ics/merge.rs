//! Several calendars written by [`super::calendar`] as one: an email
//! holding several digests carries one `text/calendar` part (RFC 6047
//! §2.4 gives each method one iCalendar object).

use std::collections::{BTreeMap, HashSet};

/// The calendars `cals` (each written by [`super::calendar`]) as one:
/// each zone once, with every observance any of them describes; each
/// event (by `UID`) once, the first one met.
pub fn merge(cals: &[&str]) -> String {
    if let [one] = cals {
        return one.to_string();
    }
    let mut zones: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut events = String::new();
    let mut uids = HashSet::new();
    for cal in cals {
        let lines: Vec<&str> = cal.split_inclusive("\r\n").collect();
        let mut i = 0;
        while i < lines.len() {
            match lines[i] {
                "BEGIN:VTIMEZONE\r\n" => {
                    let end = block_end(&lines, i, "END:VTIMEZONE\r\n");
                    let zone = &lines[i + 1..end];
                    let tzid = property(zone, "TZID:").unwrap_or_default();
                    let obs = zones.entry(tzid).or_default();
                    let mut k = 0;
                    while k < zone.len() {
                        if let Some(kind) = zone[k].strip_prefix("BEGIN:") {
                            let stop = format!("END:{kind}");
                            let e = block_end(zone, k, &stop);
                            let text: String = zone[k..=e.min(zone.len() - 1)].concat();
                            let onset = property(&zone[k..e], "DTSTART:").unwrap_or_default();
                            obs.push((onset, text));
                            k = e + 1;
                        } else {
                            k += 1;
                        }
                    }
                    i = end + 1;
                }
                "BEGIN:VEVENT\r\n" => {
                    let end = block_end(&lines, i, "END:VEVENT\r\n");
                    let uid = property(&lines[i..end], "UID:").unwrap_or_default();
                    if uids.insert(uid) {
                        events.push_str(&lines[i..=end.min(lines.len() - 1)].concat());
                    }
                    i = end + 1;
                }
                _ => i += 1,
            }
        }
    }
    let mut out = String::from(super::HEAD);
    for (tzid, mut obs) in zones {
        obs.sort();
        obs.dedup();
        out.push_str("BEGIN:VTIMEZONE\r\n");
        out.push_str(&tzid);
        for (_, text) in obs {
            out.push_str(&text);
        }
        out.push_str("END:VTIMEZONE\r\n");
    }
    out.push_str(&events);
    out.push_str("END:VCALENDAR\r\n");
    out
}

/// The index of the line `stop` from `from` on (the last line when none).
fn block_end(lines: &[&str], from: usize, stop: &str) -> usize {
    let stop = stop.trim_end();
    (from..lines.len())
        .find(|&k| lines[k].trim_end() == stop)
        .unwrap_or(lines.len().saturating_sub(1))
}

/// The first line starting with `name`, with its continuation lines, as
/// written (line ends kept).
fn property(lines: &[&str], name: &str) -> Option<String> {
    let k = lines.iter().position(|l| l.starts_with(name))?;
    let mut s = lines[k].to_string();
    for l in &lines[k + 1..] {
        if !l.starts_with(' ') {
            break;
        }
        s.push_str(l);
    }
    Some(s)
}
