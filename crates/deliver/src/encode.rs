//! Transfer encodings for the text and HTML parts of a message: `7bit` when
//! the text allows it (printable ASCII and tabs, no line over 76 bytes),
//! quoted-printable (RFC 2045 §6.7) otherwise; lines end in CRLF either way.
//!
//! lettre would choose and encode by itself, but it reads every body twice
//! to choose and encodes a byte at a time through a general routine: in
//! `bench smtp` that was a third of the CPU the queue spent on a message.
//! Here one pass checks, and one pass encodes.

use lettre::message::header::ContentTransferEncoding;
use lettre::message::Body;

/// RFC 5322 §2.1.1 allows 998 characters a line and asks for at most 78;
/// a longer line goes quoted-printable, which wraps at 76 (as lettre did).
const MAX_7BIT_LINE: usize = 76;
/// RFC 2045 §6.7 (5): encoded lines are at most 76 characters, the `=` of
/// a soft line break included.
const MAX_QP_LINE: usize = 76;

/// `text` as a body lettre writes as it is.
pub fn body(text: &str) -> Body {
    let bytes = text.as_bytes();
    if is_7bit(bytes) {
        Body::dangerous_pre_encoded(crlf(bytes), ContentTransferEncoding::SevenBit)
    } else {
        Body::dangerous_pre_encoded(
            quoted_printable(bytes),
            ContentTransferEncoding::QuotedPrintable,
        )
    }
}

/// Printable ASCII and tabs, line ends LF or CRLF (never a CR alone), and
/// no line longer than [`MAX_7BIT_LINE`] bytes.
fn is_7bit(bytes: &[u8]) -> bool {
    let mut line = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b' '..=b'~' | b'\t' => line += 1,
            b'\n' => line = 0,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {}
            _ => return false,
        }
        if line > MAX_7BIT_LINE {
            return false;
        }
    }
    true
}

/// Every line end as CRLF (the input has no CR outside CRLF).
fn crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 32 + 2);
    let mut lines = bytes.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        out.extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
        if lines.peek().is_some() {
            out.extend_from_slice(b"\r\n");
        }
    }
    out
}

/// Bytes quoted-printable leaves as they are (space and tab only inside a
/// line).
fn is_plain(b: u8) -> bool {
    matches!(b, b'!'..=b'<' | b'>'..=b'~' | b' ' | b'\t')
}

/// Quoted-printable: LF and CRLF are line breaks (CRLF out); printable
/// ASCII but `=` stays, space and tab stay except at the end of a line;
/// every other byte (a CR alone, control characters, UTF-8 beyond ASCII)
/// becomes `=XX`. Soft breaks keep lines within 76 characters. Runs of
/// plain bytes are copied whole.
fn quoted_printable(bytes: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    // Characters before a soft break's `=`.
    const WIDTH: usize = MAX_QP_LINE - 1;
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 16 + 8);
    let mut lines = bytes.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        // A CR is part of a line break only when an LF follows it.
        let broken = lines.peek().is_some();
        let line = match line.strip_suffix(b"\r") {
            Some(l) if broken => l,
            _ => line,
        };
        let ends_in_blank = |end: usize| end == line.len() && matches!(line[end - 1], b' ' | b'\t');
        let (mut col, mut i) = (0, 0);
        while i < line.len() {
            let mut run = line[i..]
                .iter()
                .take(WIDTH - col)
                .take_while(|&&b| is_plain(b))
                .count();
            if run > 0 && ends_in_blank(i + run) {
                run -= 1;
            }
            if run > 0 {
                out.extend_from_slice(&line[i..i + run]);
                col += run;
                i += run;
                continue;
            }
            // A byte to encode, or a plain one with no room left.
            let b = line[i];
            let plain = is_plain(b) && !ends_in_blank(i + 1);
            let width = if plain { 1 } else { 3 };
            if col + width > WIDTH {
                out.extend_from_slice(b"=\r\n");
                col = 0;
                continue;
            }
            if plain {
                out.push(b);
            } else {
                out.extend_from_slice(&[b'=', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
            }
            col += width;
            i += 1;
        }
        if broken {
            out.extend_from_slice(b"\r\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(encoded: &[u8]) -> Vec<u8> {
        // A decoder written from RFC 2045 §6.7, not the encoder inverted.
        let mut out = Vec::new();
        let mut i = 0;
        while i < encoded.len() {
            match encoded[i] {
                b'=' if encoded[i + 1..].starts_with(b"\r\n") => i += 3,
                b'=' => {
                    let hex = std::str::from_utf8(&encoded[i + 1..i + 3]).unwrap();
                    out.push(u8::from_str_radix(hex, 16).unwrap());
                    i += 3;
                }
                b => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        out
    }

    fn lines_ok(encoded: &[u8], max: usize) {
        for line in encoded.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            assert!(line.len() <= max, "{} > {max}", line.len());
            assert!(
                line.iter()
                    .all(|&b| (b' '..=b'~').contains(&b) || b == b'\t'),
                "{line:?}"
            );
            assert!(!line.ends_with(b" ") && !line.ends_with(b"\t"), "{line:?}");
        }
        // Every LF is part of a CRLF.
        for (i, &b) in encoded.iter().enumerate() {
            if b == b'\n' {
                assert_eq!(encoded[i - 1], b'\r');
            }
            if b == b'\r' {
                assert_eq!(encoded.get(i + 1), Some(&b'\n'));
            }
        }
    }

    #[test]
    fn short_ascii_stays_7bit_with_crlf() {
        let b = body("Hello\nworld\r\n\tindented\n");
        assert_eq!(b.encoding(), ContentTransferEncoding::SevenBit);
        assert_eq!(b.as_ref(), b"Hello\r\nworld\r\n\tindented\r\n");
        assert_eq!(body("").as_ref(), b"");
    }

    #[test]
    fn what_7bit_cannot_carry_is_quoted_printable() {
        let long = "x".repeat(MAX_7BIT_LINE + 1);
        for text in [
            "caf\u{e9}",
            "a lone\rCR",
            "NUL\0",
            "bell\u{7}",
            long.as_str(),
        ] {
            let b = body(text);
            assert_eq!(
                b.encoding(),
                ContentTransferEncoding::QuotedPrintable,
                "{text:?}"
            );
            lines_ok(b.as_ref(), MAX_QP_LINE);
            assert_eq!(decode(b.as_ref()), text.as_bytes(), "{text:?}");
        }
        assert_eq!(
            body(&"x".repeat(MAX_7BIT_LINE)).encoding(),
            ContentTransferEncoding::SevenBit
        );
    }

    #[test]
    fn quoted_printable_round_trips_hostile_text() {
        let texts = [
            "=".repeat(200),
            format!("{}\u{e9}\u{1F600}", "y".repeat(73)),
            "trailing space \nand tab\t\nend ".to_string(),
            ".\r\n.leading dot\nFrom me\n".to_string(),
            "\u{fffd}\u{0}\u{7f}\r\r\n".to_string(),
            "The quick brown fox jumps over the lazy dog. ".repeat(50),
            " ".repeat(100),
        ];
        for t in &texts {
            let enc = quoted_printable(t.as_bytes());
            lines_ok(&enc, MAX_QP_LINE);
            // Hard breaks (LF or CRLF) come back as CRLF; a CR alone is data.
            let want = t.replace("\r\n", "\n").replace('\n', "\r\n");
            assert_eq!(String::from_utf8(decode(&enc)).unwrap(), want, "{t:?}");
        }
    }

    #[test]
    fn quoted_printable_round_trips_generated_text() {
        // Deterministic pseudo-random text over a small alphabet heavy in
        // what needs care: blanks, '=', CR, LF, non-ASCII, dots.
        let alphabet = [
            "a",
            " ",
            "\t",
            "=",
            "\r",
            "\n",
            "\r\n",
            ".",
            "\u{e9}",
            "\u{1F600}",
            "\0",
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for len in [0, 1, 2, 74, 75, 76, 77, 150, 1_000] {
            for _ in 0..50 {
                let mut t = String::new();
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    t.push_str(alphabet[(x % alphabet.len() as u64) as usize]);
                }
                let enc = quoted_printable(t.as_bytes());
                lines_ok(&enc, MAX_QP_LINE);
                let want = t.replace("\r\n", "\n").replace('\n', "\r\n");
                assert_eq!(decode(&enc), want.as_bytes(), "{t:?}");
            }
        }
    }

    #[test]
    fn a_message_parser_reads_both_encodings_back() {
        let from: lettre::message::Mailbox = "a@example.com".parse().unwrap();
        for text in [
            "plain\nlines\n".to_string(),
            format!("{} caf\u{e9} = 1 \n", "long ".repeat(300)),
        ] {
            let msg = lettre::Message::builder()
                .from(from.clone())
                .to(from.clone())
                .subject("s")
                .multipart(lettre::message::MultiPart::alternative_plain_html(
                    body(&text),
                    body("<p>x</p>"),
                ))
                .unwrap()
                .formatted();
            let parsed = mail_parser::MessageParser::default().parse(&msg).unwrap();
            assert_eq!(
                parsed.body_text(0).unwrap().replace("\r\n", "\n"),
                text,
                "{}",
                String::from_utf8_lossy(&msg)
            );
            assert_eq!(parsed.body_html(0).unwrap(), "<p>x</p>");
        }
    }
}
