//! An in-process digestd HTTP server on a port the OS chose, over a test
//! database, with a clock the test moves; and a blocking client for it.
//! Dropping the server stops it (graceful shutdown) and joins its thread.

use std::sync::Arc;
use std::thread;

use chrono::{DateTime, Utc};
use digestd::access::{self, Scope};
use digestd::clock::{Clock, FixedClock};
use digestd::config::Config;
use digestd::http::App;

use super::TestDb;

pub struct Web {
    pub base: String,
    pub db: TestDb,
    pub clock: Arc<FixedClock>,
    pub client: reqwest::blocking::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

/// What a response held.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text))
    }
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    }
    /// The one-line error of a 4xx/5xx answer.
    pub fn error(&self) -> String {
        let j = self.json();
        let e = j["error"].as_str().expect("an error field").to_string();
        assert!(!e.contains('\n'), "error is one line: {e:?}");
        e
    }
}

impl Web {
    pub fn start(db: TestDb, at: DateTime<Utc>) -> Web {
        Self::start_with(db, at, |_| {})
    }

    /// Starts with settings changed by `tune` (listen is always 127.0.0.1:0).
    pub fn start_with(db: TestDb, at: DateTime<Utc>, tune: impl FnOnce(&mut Config)) -> Web {
        Self::start_inner(db, at, tune, false)
    }

    /// Starts with `[digest] base_url` set to the server's own address, so
    /// the links it writes into messages (a sign-up's verification link)
    /// lead back to it.
    pub fn start_linked(db: TestDb, at: DateTime<Utc>) -> Web {
        Self::start_inner(db, at, |_| {}, true)
    }

    /// [`Web::start_linked`] with settings changed by `tune`.
    pub fn start_linked_with(db: TestDb, at: DateTime<Utc>, tune: impl FnOnce(&mut Config)) -> Web {
        Self::start_inner(db, at, tune, true)
    }

    fn start_inner(
        db: TestDb,
        at: DateTime<Utc>,
        tune: impl FnOnce(&mut Config),
        linked: bool,
    ) -> Web {
        let mut cfg = Config::default();
        cfg.database.url = db.url.clone();
        cfg.http.listen = "127.0.0.1:0".into();
        tune(&mut cfg);
        let clock = Arc::new(FixedClock::new(at));
        let shared: Arc<dyn Clock> = clock.clone();
        let pool = db.open();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let mut cfg = cfg;
                let listener = digestd::http::bind(&cfg.http.listen).await.unwrap();
                let addr = listener.local_addr().unwrap();
                if linked {
                    cfg.digest.base_url = format!("http://{addr}");
                }
                addr_tx.send(addr).unwrap();
                let app = App::new(pool, cfg, shared);
                digestd::http::serve_on(listener, app, async {
                    let _ = stop_rx.await;
                })
                .await
                .unwrap();
            });
        });
        let addr = addr_rx.recv().expect("server started");
        Web {
            base: format!("http://{addr}"),
            db,
            clock,
            client: reqwest::blocking::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// A new token of `scope`; returns its secret.
    pub fn token(&self, name: &str, scope: Scope) -> String {
        let mut c = self.db.conn();
        access::add_token(&mut c, self.clock.now(), name, scope)
            .unwrap()
            .1
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request built by `f` from the client and answers what came back.
    pub fn send(
        &self,
        f: impl FnOnce(&reqwest::blocking::Client) -> reqwest::blocking::RequestBuilder,
    ) -> Answer {
        let r = f(&self.client).send().expect("request sent");
        Answer {
            status: r.status().as_u16(),
            headers: r.headers().clone(),
            text: r.text().unwrap(),
        }
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> Answer {
        self.send(|c| with_token(c.get(self.url(path)), token))
    }

    pub fn post(
        &self,
        path: &str,
        token: Option<&str>,
        body: impl Into<reqwest::blocking::Body>,
    ) -> Answer {
        self.send(|c| {
            with_token(c.post(self.url(path)), token)
                .header("content-type", "application/json")
                .body(body)
        })
    }

    pub fn put(
        &self,
        path: &str,
        token: Option<&str>,
        body: impl Into<reqwest::blocking::Body>,
    ) -> Answer {
        self.send(|c| {
            with_token(c.put(self.url(path)), token)
                .header("content-type", "application/json")
                .body(body)
        })
    }

    pub fn delete(&self, path: &str, token: Option<&str>) -> Answer {
        self.send(|c| with_token(c.delete(self.url(path)), token))
    }
}

pub fn with_token(
    b: reqwest::blocking::RequestBuilder,
    token: Option<&str>,
) -> reqwest::blocking::RequestBuilder {
    match token {
        Some(t) => b.bearer_auth(t),
        None => b,
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `f` on SQLite and, when the suite runs on PostgreSQL, there too.
pub fn each_backend(at: DateTime<Utc>, f: impl Fn(&Web)) {
    f(&Web::start(TestDb::sqlite(), at));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start(pg, at));
    }
}
