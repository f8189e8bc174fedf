//! SMS segment arithmetic (3GPP TS 23.038 / 23.040): a message whose every
//! character is in the GSM 7-bit alphabet travels as septets — 160 in one
//! segment, 153 per segment once concatenated, the extension characters
//! (`^{}\[~]|€` and form feed) taking two and never split across segments;
//! anything else forces UCS-2 — 70 UTF-16 units alone, 67 per segment when
//! concatenated, a surrogate pair never split.

/// The GSM 03.38 basic character set.
const BASIC: &str = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?\
¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";

/// The extension table: an escape septet, then the character.
const EXTENSION: &str = "^{}\\[~]|€\u{000C}";

/// How one message is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Gsm7,
    Ucs2,
}

/// ASCII in the basic set: printable ASCII but the extension characters
/// and the backtick, plus LF and CR.
const fn ascii_basic(b: u8) -> bool {
    matches!(b, b'\n' | b'\r' | b' '..=b'Z' | b'_' | b'a'..=b'z') || matches!(b, b'!'..=b'?')
}

fn septets(c: char) -> Option<usize> {
    if c.is_ascii() {
        let b = c as u8;
        return if ascii_basic(b) {
            Some(1)
        } else if EXTENSION.contains(c) {
            Some(2)
        } else {
            None
        };
    }
    if BASIC.contains(c) {
        Some(1)
    } else if c == '€' {
        Some(2)
    } else {
        None
    }
}

pub fn encoding(text: &str) -> Encoding {
    if text.chars().all(|c| septets(c).is_some()) {
        Encoding::Gsm7
    } else {
        Encoding::Ucs2
    }
}

/// Segments needed to send `text` (an empty message is still one).
pub fn segments(text: &str) -> usize {
    let enc = encoding(text);
    let width = |c: char| match enc {
        Encoding::Gsm7 => septets(c).unwrap_or(1),
        Encoding::Ucs2 => c.len_utf16(),
    };
    let (single, multi) = match enc {
        Encoding::Gsm7 => (160, 153),
        Encoding::Ucs2 => (70, 67),
    };
    // Pack greedily: a character that does not fit whole starts a segment.
    let (mut total, mut n, mut used) = (0, 1, 0);
    for w in text.chars().map(width) {
        total += w;
        if used + w > multi {
            n += 1;
            used = 0;
        }
        used += w;
    }
    if total <= single {
        1
    } else {
        n
    }
}

/// The most characters any message of `max` segments can hold: a cheap
/// bound for building a body that will be cut anyway.
pub fn max_chars(max: usize) -> usize {
    max.max(1) * 160
}

/// The marker put where `fit` cut the text; GSM-7 so it never forces UCS-2.
pub const CUT: &str = "...";

/// `text` followed by `tail` if that fits in `max` segments; otherwise the
/// longest start of `text` (cut between characters, at a space when one is
/// near), then [`CUT`], then `tail`. When not even the tail fits, the tail
/// itself is cut.
pub fn fit(text: &str, max: usize, tail: &str) -> String {
    let max = max.max(1);
    let whole = format!("{text}{tail}");
    if segments(&whole) <= max {
        return whole;
    }
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let with = |k: usize| format!("{}{CUT}{tail}", text[..bounds[k]].trim_end());
    // Segments grow with the prefix: find the longest prefix that fits.
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    if segments(&with(0)) > max {
        return fit_alone(tail, max);
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if segments(&with(mid)) <= max {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    // Prefer to end at a word: back off to a space within 20 characters.
    let cut = (lo.saturating_sub(20)..=lo)
        .rev()
        .find(|&k| k > 0 && text[bounds[k - 1]..bounds[k]] == *" ")
        .unwrap_or(lo);
    with(cut)
}

fn fit_alone(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        out.push(c);
        if segments(&out) > max {
            out.pop();
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gsm7_boundaries() {
        assert_eq!(segments(""), 1);
        assert_eq!(segments(&"a".repeat(160)), 1);
        assert_eq!(segments(&"a".repeat(161)), 2);
        assert_eq!(segments(&"a".repeat(306)), 2);
        assert_eq!(segments(&"a".repeat(307)), 3);
        // Extension characters take two septets.
        assert_eq!(segments(&"€".repeat(80)), 1);
        assert_eq!(segments(&"€".repeat(81)), 2);
        assert_eq!(encoding("Ça coûte 5 € [ok]"), Encoding::Ucs2); // û is not GSM
        assert_eq!(encoding("Ça coute 5 € [ok]"), Encoding::Gsm7);
    }

    #[test]
    fn an_escape_pair_is_never_split() {
        // 152 'a' then '€': the pair does not fit in the first 153, so it
        // starts the second segment.
        let t = format!("{}€{}", "a".repeat(152), "a".repeat(152));
        assert_eq!(segments(&t), 3);
    }

    #[test]
    fn one_non_gsm_character_switches_to_ucs2() {
        assert_eq!(segments(&"a".repeat(70)), 1);
        let t = format!("{}ć", "a".repeat(69));
        assert_eq!(segments(&t), 1);
        let t = format!("{}ć", "a".repeat(70));
        assert_eq!(segments(&t), 2);
        assert_eq!(segments(&"日".repeat(134)), 2);
        assert_eq!(segments(&"日".repeat(135)), 3);
        // An emoji is a surrogate pair: two UTF-16 units.
        assert_eq!(segments(&"😀".repeat(35)), 1);
        assert_eq!(segments(&"😀".repeat(36)), 2);
        // 66 units then a pair: the pair starts the next segment.
        let t = format!("{}😀{}", "日".repeat(66), "日".repeat(66));
        assert_eq!(segments(&t), 3);
    }

    #[test]
    fn fit_cuts_between_characters_and_keeps_the_tail() {
        let tail = " https://d.example/d/1/2026-11-22";
        let text = "Žluťoučký kůň úpěl ďábelské ódy ".repeat(20);
        for max in 1..=4 {
            let got = fit(&text, max, tail);
            assert!(segments(&got) <= max, "{max}: {got}");
            assert!(got.ends_with(&format!("{CUT}{tail}")), "{got}");
            let kept = got.strip_suffix(&format!("{CUT}{tail}")).unwrap();
            assert!(text.starts_with(kept));
            // Near the limit: the word-boundary back-off gives up at most
            // 20 characters, so 21 more would not have fitted.
            let next: String = text.chars().take(kept.chars().count() + 21).collect();
            assert!(segments(&format!("{}{CUT}{tail}", next.trim_end())) > max);
        }
        let short = "3 changes";
        assert_eq!(fit(short, 1, tail), format!("{short}{tail}"));
    }

    #[test]
    fn fit_prefers_a_word_boundary() {
        let text = "word ".repeat(100);
        let got = fit(&text, 1, "");
        assert!(got.ends_with(&format!("word{CUT}")), "{got}");
    }

    #[test]
    fn a_tail_that_cannot_fit_is_cut_itself() {
        let tail = "x".repeat(400);
        let got = fit("abc", 1, &tail);
        assert_eq!(got.len(), 160);
        assert_eq!(segments(&got), 1);
    }
}
