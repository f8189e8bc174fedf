//! An NDJSON request body checked as it arrives (`POST /api/v1/modifications`):
//! frames come off the connection, counted against the route's limit (413
//! past it), and go through a short channel to a blocking thread that hashes
//! them (for the `Idempotency-Key`: the same SHA-256 as a whole body's),
//! splits them into lines and checks each line as it ends (no key twice,
//! then `ingest::Scan`). What is held is a few frames, the line being read
//! (at most `ingest::MAX_LINE` + 1 bytes) and what the lines yield, the
//! checked modifications; never the body.

use std::io::{self, BufRead, Read};

use axum::body::{Body, Bytes};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use crate::ingest::{self, AtBounds, Scan};

use super::error::ApiError;
use super::media;

/// Frames read off the connection ahead of the thread checking them.
const AHEAD: usize = 4;

/// What a streamed NDJSON body came to: its lines checked, its hash (hex).
pub struct Streamed {
    pub scan: Scan,
    pub hash: String,
}

/// Reads `body` (at most `limit` bytes) and checks its lines against `at`.
/// A refusal found in a line (a key twice) is answered once the body is
/// read to its end, so the client gets it rather than a closed connection.
pub async fn ndjson(body: Body, limit: usize, at: AtBounds) -> Result<Streamed, ApiError> {
    let (tx, rx) = mpsc::channel::<Bytes>(AHEAD);
    let check = tokio::task::spawn_blocking(move || check(Frames::new(rx), &at));
    let mut tx = Some(tx);
    let mut frames = body.into_data_stream();
    let mut seen = 0usize;
    while let Some(frame) = frames.next().await {
        let frame = frame
            .map_err(|e| ApiError::bad_request(format!("could not read the request body: {e}")))?;
        seen += frame.len();
        if seen > limit {
            return Err(ApiError::too_large(limit));
        }
        if let Some(t) = &tx {
            if t.send(frame).await.is_err() {
                // The check stopped at a refusal: the rest is only read.
                tx = None;
            }
        }
    }
    drop(tx);
    check.await.map_err(|e| {
        tracing::error!(error = %e, "body check failed");
        ApiError::internal()
    })?
}

/// The blocking side: lines from `input` until it ends.
fn check(mut input: Frames, at: &AtBounds) -> Result<Streamed, ApiError> {
    let mut scan = Scan::new(at);
    let mut buf = Vec::new();
    while ingest::read_line_bounded(&mut input, &mut buf)
        .map_err(|_| ApiError::internal())?
        .is_some()
    {
        // A line too long is refused as such, not read for keys.
        if buf.len() <= ingest::MAX_LINE {
            media::unique_keys_line(scan.lines() + 1, &buf)?;
        }
        scan.push(&buf);
    }
    Ok(Streamed {
        scan,
        hash: crate::text::hex(&input.hash.finalize()),
    })
}

/// The frames sent down the channel as one `BufRead`, hashed as received.
struct Frames {
    rx: mpsc::Receiver<Bytes>,
    frame: Bytes,
    hash: Sha256,
}

impl Frames {
    fn new(rx: mpsc::Receiver<Bytes>) -> Frames {
        Frames {
            rx,
            frame: Bytes::new(),
            hash: Sha256::new(),
        }
    }
}

impl Read for Frames {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let got = self.fill_buf()?;
        let n = got.len().min(out.len());
        out[..n].copy_from_slice(&got[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Frames {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.frame.is_empty() {
            match self.rx.blocking_recv() {
                Some(f) => {
                    self.hash.update(&f);
                    self.frame = f;
                }
                None => break,
            }
        }
        Ok(&self.frame)
    }

    fn consume(&mut self, n: usize) {
        let _ = self.frame.split_to(n);
    }
}
