//! A real Synapse on loopback for the Matrix tests, started by the
//! bench crate's starter (`digestd::bench::synapse`, which `bench matrix`
//! uses too: a configuration made by Synapse itself, an overlay with a
//! free loopback port and rate limits out of the way, users registered
//! with the shared secret), and a second client, as a person's Matrix
//! app, over plain HTTP.
//!
//! When Synapse is not installed (`/opt/synapse`, or `DIGESTD_SYNAPSE`
//! naming its venv) the tests are skipped with a line on stderr, unless
//! `DIGESTD_TEST_MATRIX=required` (set by `.ci/run`), which makes a
//! missing Synapse a failure.

use serde_json::{json, Value};

pub use digestd::bench::synapse::Synapse;

/// Whether Synapse is installed; when it is not, a line on stderr (the
/// test is skipped), or a panic under `DIGESTD_TEST_MATRIX=required`.
pub fn available() -> bool {
    let venv = digestd::bench::synapse::venv();
    if digestd::bench::synapse::installed(&venv) {
        return true;
    }
    if std::env::var("DIGESTD_TEST_MATRIX").as_deref() == Ok("required") {
        panic!("DIGESTD_TEST_MATRIX=required but Synapse is not installed in {venv:?}");
    }
    eprintln!("skipped: Synapse is not installed in {venv:?}");
    false
}

/// A Synapse for server name `localhost` with `users` (name, password)
/// registered, running; `None` (skip) when it is not installed and not
/// required.
pub fn start(users: &[(&str, &str)]) -> Option<Synapse> {
    if !available() {
        return None;
    }
    Some(Synapse::start(users).unwrap_or_else(|e| panic!("synapse: {e}")))
}

/// A person's Matrix app: logged in as a user, joining, reading and
/// leaving rooms over the client-server API.
pub struct Person {
    base: String,
    token: String,
    client: reqwest::blocking::Client,
}

impl Person {
    pub fn login(server: &Synapse, name: &str, password: &str) -> Person {
        let client = reqwest::blocking::Client::new();
        let v: Value = client
            .post(format!("{}/_matrix/client/v3/login", server.url()))
            .json(&json!({
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": name},
                "password": password,
            }))
            .send()
            .unwrap()
            .json()
            .unwrap();
        Person {
            base: server.url(),
            token: v["access_token"].as_str().expect("a token").to_string(),
            client,
        }
    }

    /// The access token of this login (a device of its own).
    pub fn token(&self) -> &str {
        &self.token
    }

    fn room_url(&self, room: &str, tail: &str) -> String {
        let mut u = url::Url::parse(&self.base).unwrap();
        u.path_segments_mut()
            .unwrap()
            .extend(["_matrix", "client", "v3", "rooms", room]);
        format!("{u}/{tail}")
    }

    fn post(&self, url: &str) -> Value {
        let r = self
            .client
            .post(url)
            .bearer_auth(&self.token)
            .json(&json!({}))
            .send()
            .unwrap();
        assert!(r.status().is_success(), "{url}: {}", r.status());
        r.json().unwrap()
    }

    /// A private room of their own, no one invited; its id.
    pub fn create_room(&self) -> String {
        let v: Value = self
            .client
            .post(format!("{}/_matrix/client/v3/createRoom", self.base))
            .bearer_auth(&self.token)
            .json(&json!({"preset": "private_chat"}))
            .send()
            .unwrap()
            .json()
            .unwrap();
        v["room_id"].as_str().expect("a room").to_string()
    }

    pub fn join(&self, room: &str) {
        self.post(&self.room_url(room, "join"));
    }

    pub fn leave(&self, room: &str) {
        self.post(&self.room_url(room, "leave"));
    }

    /// The `m.room.message` events of `room`, oldest first.
    pub fn messages(&self, room: &str) -> Vec<Value> {
        let v: Value = self
            .client
            .get(self.room_url(room, "messages?dir=b&limit=100"))
            .bearer_auth(&self.token)
            .send()
            .unwrap()
            .json()
            .unwrap();
        let mut events: Vec<Value> = v["chunk"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "m.room.message")
            .cloned()
            .collect();
        events.reverse();
        events
    }
}

impl Person {
    /// `GET /_matrix/client/v3/` and `segments` (each percent-encoded),
    /// with `query`.
    fn get(&self, segments: &[&str], query: Option<&str>) -> Value {
        let mut u = url::Url::parse(&self.base).unwrap();
        u.path_segments_mut()
            .unwrap()
            .extend(["_matrix", "client", "v3"])
            .extend(segments);
        u.set_query(query);
        let r = self.client.get(u).bearer_auth(&self.token).send().unwrap();
        r.json().unwrap()
    }

    /// Replaces this person's (`me`'s) account data `kind` with `content`,
    /// as another client of the same account may.
    pub fn put_account_data(&self, me: &str, kind: &str, content: &Value) {
        let mut u = url::Url::parse(&self.base).unwrap();
        u.path_segments_mut().unwrap().extend([
            "_matrix",
            "client",
            "v3",
            "user",
            me,
            "account_data",
            kind,
        ]);
        let r = self
            .client
            .put(u)
            .bearer_auth(&self.token)
            .json(content)
            .send()
            .unwrap();
        assert!(r.status().is_success(), "{kind}: {}", r.status());
    }

    /// The rooms `me`'s (this person's own) `m.direct` lists for `user`.
    pub fn direct_rooms(&self, me: &str, user: &str) -> Vec<String> {
        let v = self.get(&["user", me, "account_data", "m.direct"], None);
        v[user]
            .as_array()
            .map(|a| a.iter().map(|r| r.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }

    /// The state event `kind` with `key` in `room`, as this person sees it.
    pub fn state(&self, room: &str, kind: &str, key: &str) -> Value {
        self.get(&["rooms", room, "state", kind, key], None)
    }

    /// The room `alias` names, if any.
    pub fn resolve(&self, alias: &str) -> Option<String> {
        let v = self.get(&["directory", "room", alias], None);
        v["room_id"].as_str().map(str::to_string)
    }

    /// The rooms this person is joined to.
    pub fn joined_rooms(&self) -> Vec<String> {
        let v = self.get(&["joined_rooms"], None);
        let rooms = v["joined_rooms"].as_array().expect("a list");
        rooms.iter().map(|r| r.as_str().unwrap().into()).collect()
    }

    /// The rooms this person is invited to (an initial `/sync`, its
    /// filter new each time: Synapse answers a repeated one from a cache).
    pub fn invites(&self) -> Vec<String> {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
        let k = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let filter = format!("{{\"room\":{{\"timeline\":{{\"limit\":{k}}}}}}}");
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("timeout", "0")
            .append_pair("filter", &filter)
            .finish();
        let v = self.get(&["sync"], Some(&query));
        v["rooms"]["invite"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// A loopback relay to a homeserver that holds back the answer to the
/// first request whose bytes hold `pattern`: the homeserver did what was
/// asked, the client never learns it. [`Hold::wait`] returns once that
/// answer has come back from the homeserver (and was swallowed).
pub struct Hold {
    pub port: u16,
    held: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
}

impl Hold {
    pub fn start(upstream: u16, pattern: &'static str) -> Hold {
        use std::io::{Read, Write};
        use std::net::{TcpListener, TcpStream};
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let taken = Arc::new(AtomicBool::new(false));
        let h = held.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = TcpStream::connect(("127.0.0.1", upstream)).unwrap();
                let armed = Arc::new(AtomicBool::new(false));
                let (mut c_in, mut s_out) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (a, t) = (armed.clone(), taken.clone());
                std::thread::spawn(move || {
                    let (mut buf, mut tail) = ([0u8; 8192], Vec::<u8>::new());
                    while let Ok(n @ 1..) = c_in.read(&mut buf) {
                        tail.extend_from_slice(&buf[..n]);
                        let seen = tail.windows(pattern.len()).any(|w| w == pattern.as_bytes());
                        if seen && !t.swap(true, Ordering::SeqCst) {
                            a.store(true, Ordering::SeqCst);
                        }
                        let keep = tail.len().saturating_sub(pattern.len());
                        tail.drain(..keep);
                        if s_out.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                });
                let (mut s_in, mut c_out, h) = (server, client, h.clone());
                std::thread::spawn(move || {
                    let mut buf = [0u8; 8192];
                    while let Ok(n @ 1..) = s_in.read(&mut buf) {
                        if armed.load(Ordering::SeqCst) {
                            *h.0.lock().unwrap() = true;
                            h.1.notify_all();
                            continue;
                        }
                        if c_out.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        Hold { port, held }
    }

    /// Waits at most `ms` for the held answer to have come back; whether
    /// it has.
    pub fn wait(&self, ms: u64) -> bool {
        let (lock, cv) = &*self.held;
        let wait = std::time::Duration::from_millis(ms);
        let (done, _) = cv
            .wait_timeout_while(lock.lock().unwrap(), wait, |d| !*d)
            .unwrap();
        *done
    }
}
