//! The accept loop under the router: hyper's HTTP/1 connections on tokio,
//! with what `axum::serve` lacks. At most `[http] max_connections` are open:
//! a connection accepted when every slot is taken makes room by closing
//! the one that has waited longest for a request ([`shed`]), or waits for
//! a slot, and nothing more is accepted meanwhile (the next ones wait in
//! the kernel's backlog); a client has `header_timeout_seconds` to send a
//! request head and a kept-alive connection `idle_timeout_seconds` to
//! start its next request ([`Watch`]); failing accepts back off instead of
//! spinning. On shutdown the listener closes at once and the connections
//! drain: each finishes the request it is in, then closes.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, Semaphore};
use tokio::time::Instant;
use tower::ServiceExt;

use crate::config::HttpConfig;

mod shed;

/// hyper's read buffer, which bounds a request head: 64 KiB rather than
/// its ~400 KiB default, so that the open connections together hold at
/// most `max_connections` × 64 KiB of heads.
const MAX_BUF_BYTES: usize = 64 * 1024;

/// While every slot is taken and no connection has waited long enough to
/// be closed, how often to look again.
const SHED_RETRY: Duration = Duration::from_millis(250);

/// The longest pause between accept attempts while they fail (EMFILE).
const ACCEPT_BACKOFF_CAP: Duration = Duration::from_secs(1);

/// The connection limits, from `[http]`.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

impl Limits {
    pub fn from_config(c: &HttpConfig) -> Limits {
        Limits {
            max_connections: c.max_connections.max(1),
            header_timeout: Duration::from_secs(c.header_timeout_seconds.max(1)),
            idle_timeout: Duration::from_secs(c.idle_timeout_seconds.max(1)),
        }
    }
}

/// Descriptors kept for everything but HTTP connections: the database
/// pool, the lease files, the sent journal and its replays, outbox files,
/// SMTP and XMPP sessions, the runtime's own.
pub const RESERVED_DESCRIPTORS: u64 = 256;

impl Limits {
    /// Fits the connection cap to the process's limit on open files: the
    /// soft limit is raised to the hard one first, and the cap lowered,
    /// with a warning, when it would leave fewer than
    /// [`RESERVED_DESCRIPTORS`] for the tick and the queue.
    pub(crate) fn within_descriptors(mut self) -> Limits {
        use rustix::process::{getrlimit, setrlimit, Resource};
        let mut nofile = getrlimit(Resource::Nofile);
        if nofile.current < nofile.maximum {
            let raised = rustix::process::Rlimit {
                current: nofile.maximum,
                maximum: nofile.maximum,
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                nofile = getrlimit(Resource::Nofile);
            }
        }
        let Some(limit) = nofile.current else {
            return self;
        };
        let fits = usize::try_from(limit.saturating_sub(RESERVED_DESCRIPTORS).max(1))
            .unwrap_or(usize::MAX);
        if fits < self.max_connections {
            tracing::warn!(
                max_connections = self.max_connections,
                open_files_limit = limit,
                reserved = RESERVED_DESCRIPTORS,
                using = fits,
                "http: max_connections lowered to fit the limit on open files (raise LimitNOFILE or ulimit -n)"
            );
            self.max_connections = fits;
        }
        self
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then stops
/// accepting and waits for the open connections to drain.
pub async fn run(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let open = Arc::new(shed::Open::default());
    let mut full_logged: Option<Instant> = None;
    // `stop` tells the connections to drain; each holds a `done` receiver,
    // so that `done_tx.closed()` completes when the last one has ended.
    let (stop_tx, stop_rx) = watch::channel(false);
    let (done_tx, done_rx) = watch::channel(());
    let mut builder = http1::Builder::new();
    // hyper's own head timer runs from the moment a connection is ready for
    // a request (open, or the previous answer sent) to the end of the head,
    // so on a kept-alive connection it covers the idle wait and the head
    // together. [`Watch`] applies the two limits separately; hyper's timer,
    // set to their sum, is a backstop that never fires before them.
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout + limits.idle_timeout)
        .keep_alive(true)
        .max_buf_size(MAX_BUF_BYTES);
    let mut errors = AcceptErrors::default();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok(accepted) => {
                    errors.reset();
                    accepted
                }
                // One client gave up before it was accepted: nothing to
                // wait for.
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    let pause = errors.failed(&e);
                    tokio::select! {
                        _ = &mut shutdown => break,
                        _ = tokio::time::sleep(pause) => continue,
                    }
                }
            },
        };
        // Then its slot: past the cap, room is made or waited for, and
        // nothing else is accepted meanwhile.
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if full_logged.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        shed = open.shed_count(),
                        "http: every connection slot is taken; closing the ones that waited longest for a request"
                    );
                    full_logged = Some(Instant::now());
                }
                let mut permit = None;
                while permit.is_none() {
                    open.shed_longest_waiting(shed::SHED_AFTER);
                    tokio::select! {
                        _ = &mut shutdown => break,
                        p = slots.clone().acquire_owned() => match p {
                            Ok(p) => permit = Some(p),
                            Err(_) => break,
                        },
                        _ = tokio::time::sleep(SHED_RETRY) => {}
                    }
                }
                match permit {
                    Some(p) => p,
                    None => break,
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let conn = Connection {
            router: router.clone(),
            builder: builder.clone(),
            limits,
            peer,
            open: open.clone(),
        };
        let (stop, done) = (stop_rx.clone(), done_rx.clone());
        tokio::spawn(async move {
            conn.serve(stream, stop).await;
            drop((permit, done));
        });
    }
    // No new connection from here: a client connecting now is refused.
    drop(listener);
    let _ = stop_tx.send(true);
    drop(done_rx);
    done_tx.closed().await;
}

fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    )
}

/// Logs failed accepts at most once a second, and says how long to pause:
/// 10 ms doubling to a second while they keep failing (a full descriptor
/// table empties only as connections close).
#[derive(Default)]
struct AcceptErrors {
    pause: Option<Duration>,
    logged: Option<Instant>,
    since_logged: u64,
}

impl AcceptErrors {
    fn reset(&mut self) {
        self.pause = None;
    }

    fn failed(&mut self, e: &std::io::Error) -> Duration {
        self.since_logged += 1;
        if self
            .logged
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            tracing::warn!(error = %e, failures = self.since_logged, "http: accept failed; backing off");
            self.logged = Some(Instant::now());
            self.since_logged = 0;
        }
        let pause = self.pause.map_or(Duration::from_millis(10), |p| {
            (p * 2).min(ACCEPT_BACKOFF_CAP)
        });
        self.pause = Some(pause);
        pause
    }
}

/// One accepted connection.
struct Connection {
    router: Router,
    builder: http1::Builder,
    limits: Limits,
    peer: SocketAddr,
    open: Arc<shed::Open>,
}

impl Connection {
    async fn serve(self, stream: TcpStream, mut stop: watch::Receiver<bool>) {
        let watch = Arc::new(Watch::new());
        let _entry = self.open.enter(&watch);
        let io = TokioIo::new(Tracked {
            inner: stream,
            watch: watch.clone(),
        });
        let (router, peer, w) = (self.router, self.peer, watch.clone());
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            w.request_started();
            // What `into_make_service_with_connect_info` provided.
            req.extensions_mut().insert(ConnectInfo(peer));
            let (router, w) = (router.clone(), w.clone());
            async move {
                let response = router.oneshot(req).await?;
                Ok::<_, Infallible>(response.map(|inner| Finished { inner, watch: w }))
            }
        });
        let conn = self.builder.serve_connection(io, service);
        tokio::pin!(conn);
        let mut draining = false;
        loop {
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(peer = %peer, error = %e, "http: connection ended");
                    }
                    return;
                }
                // Shutdown: a connection in a request finishes it (its
                // answer then closes it); any other closes now.
                _ = stop.wait_for(|s| *s), if !draining => {
                    if !watch.busy() {
                        return;
                    }
                    draining = true;
                    conn.as_mut().graceful_shutdown();
                }
                // Waiting for or reading a head past its time: no request
                // is being answered, so dropping the connection loses
                // nothing. (hyper's graceful shutdown would wait for a
                // head that has begun.)
                _ = watch.expired(self.limits) => {
                    tracing::debug!(peer = %peer, "http: connection timed out");
                    return;
                }
            }
        }
    }
}

mod timing;
use timing::{Finished, Tracked, Watch};

#[cfg(test)]
mod tests;
