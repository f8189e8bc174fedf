//! A scripted HTTP server on loopback playing an SMS gateway: each request
//! gets the next scripted (status, extra headers, body), then 200 with a
//! message id; every request is recorded (before the reply, which
//! [`Gateway::set_delay`] can hold back: a slow gateway a crash test kills
//! a pass against, and [`Gateway::hold_until`] until several requests are
//! in: a receiver that answers only once they are all in flight).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A form field, percent-decoded.
    pub fn form(&self, name: &str) -> Option<String> {
        self.body.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == name).then(|| {
                let v = v.replace('+', " ");
                percent_encoding::percent_decode_str(&v)
                    .decode_utf8()
                    .unwrap()
                    .into_owned()
            })
        })
    }
}

pub type Reply = (u16, Vec<(String, String)>, String);

/// A rate limit (429 with `Retry-After: 900`), then a server error (500):
/// what [`super::delivery::retry_after_then_backoff`] expects.
pub fn slow_then_failing() -> Vec<Reply> {
    vec![
        (
            429,
            vec![("Retry-After".into(), "900".into())],
            "{\"error\": \"slow down\"}".into(),
        ),
        (500, vec![], "oops".into()),
    ]
}

#[derive(Default)]
struct State {
    requests: Mutex<Vec<Request>>,
    script: Mutex<VecDeque<Reply>>,
    delay_ms: AtomicU64,
    /// Replies wait until this many requests are in (or [`HOLD_LIMIT`]).
    hold_until: AtomicUsize,
    /// Replies that gave up waiting for them.
    holds_given_up: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// The longest a reply waits for [`Gateway::hold_until`]'s requests:
/// short of the tests' 10 s client timeout.
const HOLD_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

pub struct Gateway {
    pub port: u16,
    state: Arc<State>,
}

impl Gateway {
    pub fn start(script: Vec<Reply>) -> Gateway {
        Gateway::start_on(0, script)
    }

    /// On a given port (0: any free one), e.g. one that was down before.
    pub fn start_on(port: u16, script: Vec<Reply>) -> Gateway {
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        *state.script.lock().unwrap() = script.into();
        let st = state.clone();
        thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let st = st.clone();
                thread::spawn(move || {
                    let _ = serve(conn, &st);
                });
            }
        });
        Gateway { port, state }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/send", self.port)
    }

    /// Each reply from now on comes `ms` after its request is recorded.
    pub fn set_delay(&self, ms: u64) {
        self.state.delay_ms.store(ms, Ordering::SeqCst);
    }

    /// Each reply from now on waits until `n` requests have come in
    /// (counted from the start), at most [`HOLD_LIMIT`]: a receiver that
    /// answers only once `n` posts are in flight at once.
    pub fn hold_until(&self, n: usize) {
        self.state.hold_until.store(n, Ordering::SeqCst);
    }

    /// Replies that waited [`HOLD_LIMIT`] for [`Gateway::hold_until`]'s
    /// requests in vain.
    pub fn holds_given_up(&self) -> usize {
        self.state.holds_given_up.load(Ordering::SeqCst)
    }

    /// The most requests that were in at once with their replies not yet
    /// written.
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }
}

fn serve(conn: TcpStream, st: &State) -> std::io::Result<()> {
    let mut w = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            r.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        r.read_exact(&mut body)?;
        let n = {
            let mut reqs = st.requests.lock().unwrap();
            reqs.push(Request {
                method,
                path,
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
            reqs.len()
        };
        let now_in = st.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        st.max_in_flight.fetch_max(now_in, Ordering::SeqCst);
        hold(st);
        let delay = st.delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            thread::sleep(std::time::Duration::from_millis(delay));
        }
        let (status, extra, body) = st.script.lock().unwrap().pop_front().unwrap_or((
            200,
            vec![],
            format!("{{\"sid\": \"SM{n:04}\"}}"),
        ));
        let mut resp = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in extra {
            resp.push_str(&format!("{k}: {v}\r\n"));
        }
        resp.push_str("\r\n");
        resp.push_str(&body);
        st.in_flight.fetch_sub(1, Ordering::SeqCst);
        w.write_all(resp.as_bytes())?;
    }
}

/// Waits until [`State::hold_until`] requests are in, at most
/// [`HOLD_LIMIT`]; a wait in vain is counted.
fn hold(st: &State) {
    let until = std::time::Instant::now() + HOLD_LIMIT;
    while st.requests.lock().unwrap().len() < st.hold_until.load(Ordering::SeqCst) {
        if std::time::Instant::now() >= until {
            st.holds_given_up.fetch_add(1, Ordering::SeqCst);
            return;
        }
        thread::sleep(std::time::Duration::from_millis(1));
    }
}
