//! The `stdout` email transport: every message on standard output,
//! mbox-style (mboxrd), for a pipeline or a look at what would be sent.

use std::io::Write;

use super::{Outcome, Outgoing};
use crate::listener::DeliveryError;

/// Why a message was not written to standard output: writing or
/// flushing failed (a closed pipe, a full disk behind a redirection).
/// Always transient: the reader may come back, the disk may be freed.
#[derive(Debug, thiserror::Error)]
#[error("stdout: {0}")]
pub struct Error(pub std::io::Error);

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        DeliveryError::verdict(true, None, &e.to_string(), None)
    }
}

/// Writes `m` to `out` after a `From ` line, so a reader can split the
/// messages.
pub(super) fn write(out: &mut impl Write, m: &Outgoing) -> Outcome {
    let r = writeln!(out, "From {} ", m.envelope_from)
        .and_then(|_| out.write_all(&mboxrd(&m.bytes)))
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush());
    match r {
        Ok(()) => Outcome::sent(None, "written to stdout"),
        Err(e) => Outcome::from(DeliveryError::from(Error(e))),
    }
}

/// A message's lines as an mbox (mboxrd) holds them: a line that starts
/// with `From `, after any number of `>`, gets one more `>`, so that no
/// line of a message reads as the start of the next one; a reader removes
/// one `>` from each such line.
fn mboxrd(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let quoted = line.iter().take_while(|b| **b == b'>').count();
        if line[quoted..].starts_with(b"From ") {
            out.push(b'>');
        }
        out.extend_from_slice(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mbox_lines_that_read_as_a_new_message_are_quoted() {
        let body = b"Subject: s\r\n\r\nFrom me\r\n>From you\r\nnot From here\r\nFrom\r\nFrom";
        let got = String::from_utf8(mboxrd(body)).unwrap();
        assert_eq!(
            got,
            "Subject: s\r\n\r\n>From me\r\n>>From you\r\nnot From here\r\nFrom\r\nFrom"
        );
        // Three notifications whose bodies forge "From " lines still read
        // as three messages.
        let mbox: Vec<u8> = (0..3)
            .flat_map(|_| {
                let mut m = b"From digestd@localhost \n".to_vec();
                m.extend(mboxrd(b"Subject: x\r\n\r\nFrom forged@evil\r\nFrom x\r\n"));
                m.push(b'\n');
                m
            })
            .collect();
        let starts = String::from_utf8(mbox)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("From "))
            .count();
        assert_eq!(starts, 3);
    }

    /// A writer that fails, as a closed pipe does.
    struct Closed(&'static str);

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, self.0))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_transient_and_one_line() {
        let m = Outgoing::text("a@example.com", "hi", Default::default());
        for why in ["broken pipe", "", "gone\r\nX-Injected: 1"] {
            match write(&mut Closed(why), &m) {
                Outcome::Transient {
                    code: None, text, ..
                } => {
                    assert!(text.starts_with("stdout: "), "{text}");
                    assert!(!text.contains(['\r', '\n']), "{text}");
                }
                other => panic!("{other:?}"),
            }
        }
        let mut buf = Vec::new();
        assert_eq!(
            write(&mut buf, &m),
            Outcome::sent(None, "written to stdout")
        );
        assert_eq!(buf, b"From  \nhi\n");
    }
}
