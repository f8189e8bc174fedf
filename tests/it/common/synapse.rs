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
