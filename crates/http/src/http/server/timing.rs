//! A connection's account of its own timing ([`Watch`]), and the socket and
//! answer-body wrappers that keep it ([`Tracked`], [`Finished`]).

use super::*;

/// What a connection's timeouts look at. hyper has no idle timeout, and
/// its head timer cannot tell waiting for a request from reading one, so
/// the connection keeps this account: the socket reads mark the first byte
/// of a head, the service marks a head complete, and the answer's body
/// marks the request done when hyper drops it. Times are milliseconds
/// since the connection opened.
pub(super) struct Watch {
    pub(super) opened: Instant,
    /// A request is being answered: no timeout here (the request timeout
    /// of the router applies).
    pub(super) busy: AtomicBool,
    /// When the connection became ready for its next request.
    pub(super) ready_at: AtomicU64,
    /// When the first byte of the next head came ([`NONE`]: not yet).
    pub(super) head_at: AtomicU64,
    /// Closed to make room for a new connection ([`shed`]).
    pub(super) shed: AtomicBool,
    pub(super) changed: Notify,
}

pub(super) const NONE: u64 = u64::MAX;

impl Watch {
    pub(super) fn new() -> Watch {
        Watch {
            opened: Instant::now(),
            busy: AtomicBool::new(false),
            ready_at: AtomicU64::new(0),
            // A new connection's first request is timed as a head from the
            // moment it connected: connecting and sending nothing is not
            // a kept-alive wait.
            head_at: AtomicU64::new(0),
            shed: AtomicBool::new(false),
            changed: Notify::new(),
        }
    }

    pub(super) fn now_ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    pub(super) fn busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }

    pub(super) fn request_started(&self) {
        self.busy.store(true, Ordering::SeqCst);
        self.head_at.store(NONE, Ordering::SeqCst);
        self.changed.notify_one();
    }

    pub(super) fn request_done(&self) {
        self.ready_at.store(self.now_ms(), Ordering::SeqCst);
        self.busy.store(false, Ordering::SeqCst);
        self.changed.notify_one();
    }

    pub(super) fn read_some(&self) {
        if self.busy() {
            return;
        }
        let now = self.now_ms();
        let first = self
            .head_at
            .compare_exchange(NONE, now, Ordering::SeqCst, Ordering::SeqCst);
        if first.is_ok() {
            self.changed.notify_one();
        }
    }

    /// Since when the connection has waited for a request (a head that has
    /// not ended, or the next one on a kept-alive connection); `None` while
    /// a request is answered, or once it has been shed.
    pub(super) fn waiting_since(&self) -> Option<Instant> {
        if self.busy() || self.shed.load(Ordering::SeqCst) {
            return None;
        }
        let ms = match self.head_at.load(Ordering::SeqCst) {
            NONE => self.ready_at.load(Ordering::SeqCst),
            head => head,
        };
        Some(self.opened + Duration::from_millis(ms))
    }

    /// Closes the connection at once unless a request is being answered
    /// (which then ends it as usual).
    pub(super) fn shed(&self) {
        self.shed.store(true, Ordering::SeqCst);
        self.changed.notify_one();
    }

    /// When the connection times out as things stand (`None`: it is busy).
    pub(super) fn deadline(&self, limits: Limits) -> Option<Instant> {
        if self.busy() {
            return None;
        }
        if self.shed.load(Ordering::SeqCst) {
            return Some(self.opened);
        }
        let at = |ms: u64, d: Duration| self.opened + Duration::from_millis(ms) + d;
        Some(match self.head_at.load(Ordering::SeqCst) {
            NONE => at(self.ready_at.load(Ordering::SeqCst), limits.idle_timeout),
            head => at(head, limits.header_timeout),
        })
    }

    /// Completes when the connection has waited past its deadline.
    pub(super) async fn expired(&self, limits: Limits) {
        loop {
            // `notify_one` keeps a wake-up for a waiter that comes later,
            // so a change between here and the wait is not lost.
            match self.deadline(limits) {
                Some(d) if d <= Instant::now() => return,
                Some(d) => {
                    tokio::select! {
                        _ = tokio::time::sleep_until(d) => {}
                        _ = self.changed.notified() => {}
                    }
                }
                None => self.changed.notified().await,
            }
        }
    }
}

/// The socket, telling its [`Watch`] when bytes come in.
pub(super) struct Tracked {
    pub(super) inner: TcpStream,
    pub(super) watch: Arc<Watch>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.watch.read_some();
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// An answer's body, telling its [`Watch`] the request is done when hyper
/// drops it (sent, or the connection failed).
pub(super) struct Finished {
    pub(super) inner: Body,
    pub(super) watch: Arc<Watch>,
}

impl Drop for Finished {
    fn drop(&mut self) {
        self.watch.request_done();
    }
}

impl hyper::body::Body for Finished {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
