//! A real Synapse on loopback for the Matrix tests: a configuration made
//! by Synapse itself in a temporary directory, with an overlay (a free
//! loopback port, client API only, no key servers, rate limits out of the
//! way), users registered with the shared secret, and a second client, as
//! a person's Matrix app, over plain HTTP.
//!
//! When Synapse is not installed (`/opt/synapse`, or `DIGESTD_SYNAPSE`
//! naming its venv) the tests are skipped with a line on stderr, unless
//! `DIGESTD_TEST_MATRIX=required` (set by `.ci/run`), which makes a
//! missing Synapse a failure.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::smtp::free_port;

pub struct Synapse {
    dir: tempfile::TempDir,
    venv: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

fn venv() -> PathBuf {
    PathBuf::from(std::env::var("DIGESTD_SYNAPSE").unwrap_or_else(|_| "/opt/synapse".into()))
}

fn installed(venv: &Path) -> bool {
    venv.join("bin/python").exists() && venv.join("bin/register_new_matrix_user").exists()
}

/// The overlay on Synapse's own configuration (later files win).
fn overlay(port: u16) -> String {
    let lots = "{per_second: 1000, burst_count: 1000}";
    format!(
        "listeners:\n  - port: {port}\n    bind_addresses: ['127.0.0.1']\n    type: http\n    \
         tls: false\n    x_forwarded: false\n    resources:\n      - names: [client]\n        \
         compress: false\n\
         trusted_key_servers: []\nsuppress_key_server_warning: true\n\
         rc_message: {lots}\nrc_registration: {lots}\nrc_room_creation: {lots}\n\
         rc_login:\n  address: {lots}\n  account: {lots}\n  failed_attempts: {lots}\n\
         rc_joins:\n  local: {lots}\n  remote: {lots}\n\
         rc_invites:\n  per_room: {lots}\n  per_user: {lots}\n  per_issuer: {lots}\n"
    )
}

impl Synapse {
    /// A Synapse for server name `localhost` with `users` (name,
    /// password) registered, running; `None` (skip) when it is not
    /// installed and not required.
    pub fn start(users: &[(&str, &str)]) -> Option<Synapse> {
        let venv = venv();
        if !installed(&venv) {
            if std::env::var("DIGESTD_TEST_MATRIX").as_deref() == Ok("required") {
                panic!("DIGESTD_TEST_MATRIX=required but Synapse is not installed in {venv:?}");
            }
            eprintln!("skipped: Synapse is not installed in {venv:?}");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(venv.join("bin/python"))
            .args(["-m", "synapse.app.homeserver", "--server-name", "localhost"])
            .args([
                "--config-path",
                "hs.yaml",
                "--generate-config",
                "--report-stats=no",
            ])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "synapse --generate-config: {out:?}");
        let port = free_port();
        std::fs::write(dir.path().join("overlay.yaml"), overlay(port)).unwrap();
        let mut s = Synapse {
            dir,
            venv,
            port,
            child: None,
        };
        s.up();
        for (name, pw) in users {
            s.register(name, pw);
        }
        Some(s)
    }

    fn up(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("stdout.log")).unwrap();
        let child = Command::new(self.venv.join("bin/python"))
            .args([
                "-m",
                "synapse.app.homeserver",
                "-c",
                "hs.yaml",
                "-c",
                "overlay.yaml",
            ])
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(60);
        let versions = format!("{}/_matrix/client/versions", self.url());
        while reqwest::blocking::get(&versions).map_or(true, |r| !r.status().is_success()) {
            assert!(
                Instant::now() < until,
                "synapse did not answer on {}: {}",
                self.port,
                self.log()
            );
            if let Some(Ok(Some(st))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!("synapse exited ({st}): {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn register(&self, name: &str, password: &str) {
        let out = Command::new(self.venv.join("bin/register_new_matrix_user"))
            .args(["-c", "hs.yaml", "-u", name, "-p", password, "--no-admin"])
            .arg(self.url())
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "register_new_matrix_user: {out:?}");
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
        format!("{}{}", read("stdout.log"), read("homeserver.log"))
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
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
