//! Fitting lines into a service's limits: packed into chunks (Slack
//! sections, Discord embeds, one ntfy body), cut at a line when they do
//! not all fit, the last chunk then ending with the tail ("… and N
//! more"), whose room is kept aside first so the tail always fits.

/// How a service counts: characters (Slack, Discord) or bytes (ntfy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Chars,
    Bytes,
}

impl Measure {
    pub fn len(self, s: &str) -> usize {
        match self {
            Measure::Chars => s.chars().count(),
            Measure::Bytes => s.len(),
        }
    }

    fn clip(self, s: &str, max: usize) -> String {
        match self {
            Measure::Chars => super::clip(s, max),
            Measure::Bytes => super::clip_bytes(s, max),
        }
    }
}

/// A service's limits for the lines of one post.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most in one chunk, its lines joined by newlines.
    pub chunk: usize,
    /// The most chunks.
    pub chunks: usize,
    /// The most in all chunks together.
    pub total: usize,
    pub measure: Measure,
}

/// A line in the service's syntax, and whether "… and N more" counts it
/// when it is left out (an item does, a heading does not).
pub type Written = (String, bool);

/// `lines` packed into chunks within `limits`. When some are left out, or
/// `more` were left out before (the digest's own limit), the last chunk
/// ends with `tail(n)`, n what was left out.
pub(crate) fn pack(
    lines: &[Written],
    more: usize,
    limits: Limits,
    tail: impl Fn(usize) -> String,
) -> Vec<String> {
    let (chunks, used) = greedy(lines, limits, 0);
    if used == lines.len() && more == 0 {
        return chunks;
    }
    let most = lines.iter().filter(|l| l.1).count() + more;
    let reserve = limits.measure.len(&tail(most)) + 1;
    let (mut chunks, used) = greedy(lines, limits, reserve);
    let left = lines[used..].iter().filter(|l| l.1).count() + more;
    let tail = tail(left);
    match chunks.last_mut() {
        Some(last) => {
            last.push('\n');
            last.push_str(&tail);
        }
        None => chunks.push(tail),
    }
    chunks
}

/// How many of `costs`, in order, fit in `budget`: all when they do,
/// else as many as fit with `reserve` kept for the tail.
pub fn take(costs: &[usize], budget: usize, reserve: usize) -> usize {
    if costs.iter().sum::<usize>() <= budget {
        return costs.len();
    }
    let budget = budget.saturating_sub(reserve);
    let mut sum = 0;
    costs
        .iter()
        .take_while(|&&c| {
            sum += c;
            sum <= budget
        })
        .count()
}

/// Lines in order while they fit with `reserve` kept free in the last
/// chunk and in the total; how many were taken. A line longer than a
/// chunk is clipped.
fn greedy(lines: &[Written], l: Limits, reserve: usize) -> (Vec<String>, usize) {
    let chunk_max = l.chunk.saturating_sub(reserve);
    let total_max = l.total.saturating_sub(reserve);
    let mut chunks: Vec<String> = Vec::new();
    let mut total = 0;
    for (i, (line, _)) in lines.iter().enumerate() {
        let line = l.measure.clip(line, chunk_max);
        let n = l.measure.len(&line);
        let fits_last = chunks
            .last()
            .is_some_and(|c| l.measure.len(c) + 1 + n <= chunk_max);
        let add = if fits_last { n + 1 } else { n };
        if total + add > total_max || (!fits_last && chunks.len() == l.chunks) {
            return (chunks, i);
        }
        total += add;
        match chunks.last_mut().filter(|_| fits_last) {
            Some(c) => {
                c.push('\n');
                c.push_str(&line);
            }
            None => chunks.push(line),
        }
    }
    (chunks, lines.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<Written> {
        (0..n).map(|i| (format!("line {i:03}"), true)).collect()
    }

    const L: Limits = Limits {
        chunk: 30,
        chunks: 3,
        total: 70,
        measure: Measure::Chars,
    };

    #[test]
    fn what_fits_is_kept_whole() {
        let c = pack(&lines(3), 0, L, |n| format!("… and {n} more"));
        assert_eq!(c, ["line 000\nline 001\nline 002"]);
    }

    #[test]
    fn what_does_not_is_cut_at_a_line_and_the_tail_fits() {
        let tail = |n| format!("… and {n} more");
        let c = pack(&lines(100), 0, L, tail);
        assert!(
            c.len() <= 3 && c.iter().all(|x| x.chars().count() <= 30),
            "{c:?}"
        );
        assert!(c.iter().map(|x| x.chars().count() + 1).sum::<usize>() <= 71);
        let shown = c
            .iter()
            .flat_map(|x| x.lines())
            .filter(|l| l.starts_with("line"))
            .count();
        assert!(c
            .last()
            .unwrap()
            .ends_with(&format!("… and {} more", 100 - shown)));
        // The digest's own "more" shows even when every line fits.
        let c = pack(&lines(1), 4, L, tail);
        assert_eq!(c, ["line 000\n… and 4 more"]);
    }

    #[test]
    fn costs_are_taken_while_they_fit_with_the_reserve() {
        assert_eq!(take(&[10, 10, 10], 30, 15), 3);
        assert_eq!(take(&[10, 10, 10, 10], 30, 15), 1);
    }

    #[test]
    fn a_line_longer_than_a_chunk_is_clipped() {
        let long = vec![("é".repeat(100), true)];
        let c = pack(
            &long,
            0,
            Limits {
                measure: Measure::Bytes,
                ..L
            },
            |n| format!("+{n}"),
        );
        assert!(c[0].len() <= 30 && c[0].ends_with('…'), "{c:?}");
    }
}
