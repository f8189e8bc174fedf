//! What the bench checks the sink and the transport by: the email
//! listener wrapped to count what the far end accepted and its bytes,
//! smtp-sink's own running count (`-c`), and the `-l` that gives
//! smtp-source messages of the same size on the wire.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::deliver::listener::{Accepted, Delivered, DeliveryError, Listener, Outgoing};
use crate::error::Result;

/// smtp-source's own header lines on the wire (From, To, Date,
/// Message-Id, the blank line, with CRLFs), which `-l` does not count.
pub(super) const SOURCE_HEADERS: usize = 128;

/// The email listener, counting the messages the far end accepted and
/// their bytes (headers and body as handed to the session, before SMTP's
/// dot-stuffing): the mean size smtp-source is given.
pub(super) struct Counting {
    pub inner: Box<dyn Listener>,
    pub accepted: Arc<AtomicU64>,
    pub bytes: Arc<AtomicU64>,
}

impl Listener for Counting {
    fn key(&self) -> crate::parties::Channel {
        self.inner.key()
    }

    fn send_raw(&mut self, m: &Outgoing) -> std::result::Result<Delivered, DeliveryError> {
        let r = self.inner.send_raw(m);
        if r.is_ok() {
            self.accepted.fetch_add(1, Ordering::Relaxed);
            self.bytes
                .fetch_add(m.bytes.len() as u64, Ordering::Relaxed);
        }
        r
    }

    fn send_noting(
        &mut self,
        msgs: &[Outgoing],
        accepted: Accepted<'_>,
    ) -> Vec<std::result::Result<Delivered, DeliveryError>> {
        let (n, b) = (&self.accepted, &self.bytes);
        self.inner.send_noting(msgs, &|i, d| {
            n.fetch_add(1, Ordering::Relaxed);
            b.fetch_add(msgs[i].bytes.len() as u64, Ordering::Relaxed);
            accepted(i, d)
        })
    }

    fn shutdown(&mut self) {
        self.inner.shutdown()
    }
}

/// The count at the end of smtp-sink's `-c` output: records like
/// `sess=1 quit=1 mesg=7`, each ended by a carriage return (the text after
/// the last one may be a record half written).
fn last_count(s: &str) -> Option<u64> {
    let done = &s[..s.rfind('\r')?];
    let last = done.rsplit('\r').next()?;
    last.rsplit_once("mesg=")?.1.trim().parse().ok()
}

/// smtp-sink's running count of messages, from the file its `-c` output
/// goes to.
pub(in crate::bench) struct SinkCount(pub PathBuf);

impl SinkCount {
    pub fn read(&self) -> Result<u64> {
        let mut f = std::fs::File::open(&self.0)?;
        let len = f.metadata()?.len();
        f.seek(SeekFrom::Start(len.saturating_sub(256)))?;
        let mut tail = Vec::new();
        f.read_to_end(&mut tail)?;
        Ok(last_count(&String::from_utf8_lossy(&tail)).unwrap_or(0))
    }

    /// The count once it has reached `want` and stayed a moment longer (so
    /// that a message too many shows), or what it is after 10 s.
    pub fn settle(&self, want: u64) -> Result<u64> {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let v = self.read()?;
            if v >= want {
                std::thread::sleep(Duration::from_millis(200));
                return self.read();
            }
            if Instant::now() > until {
                return Ok(v);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// smtp-source's `-l` for messages of `mean` bytes on the wire: `-l`
/// counts the payload's bytes with their CRLFs (lines of 78 characters),
/// not its own header lines.
pub(super) fn source_length(mean: usize) -> usize {
    mean.saturating_sub(SOURCE_HEADERS).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sink_count_is_the_last_whole_record() {
        assert_eq!(last_count(""), None);
        assert_eq!(last_count("sess=0 quit=0 mesg=1\r"), Some(1));
        assert_eq!(
            last_count("sess=0 quit=0 mesg=6\rsess=1 quit=1 mesg=7\rsess=1 qu"),
            Some(7)
        );
        assert_eq!(
            last_count("mesg=6\rsess=1 quit=1 mesg=12\rsess=1 quit=1 mesg=1"),
            Some(12)
        );
    }

    #[test]
    fn smtp_source_length_leaves_out_its_own_headers() {
        // Measured: `-l 4644` put 58 lines of 78 characters and one of 4,
        // each with CRLF (4,644 bytes), after 127 bytes of headers.
        assert_eq!(source_length(4644 + SOURCE_HEADERS), 4644);
        assert_eq!(source_length(10), 1);
    }
}
