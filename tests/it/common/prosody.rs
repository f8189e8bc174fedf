//! A real Prosody on loopback for the XMPP tests, from the config kept in
//! `tests/fixtures/prosody/`, and a second XMPP client that reads what it
//! is sent.
//!
//! When `prosody` is not installed the tests are skipped with a line on
//! stderr, unless `DIGESTD_TEST_XMPP=required` (set by `.ci/run`), which
//! makes a missing Prosody a failure.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio_xmpp::connect::DnsConfig;
use tokio_xmpp::jid::{BareJid, Jid};
use tokio_xmpp::parsers::message::MessageType;
use tokio_xmpp::parsers::presence::Presence;
use tokio_xmpp::xmlstream::Timeouts;
use tokio_xmpp::{Client, Event, Stanza};

use super::smtp::free_port;

pub struct Prosody {
    dir: tempfile::TempDir,
    pub port: u16,
    child: Option<Child>,
}

fn installed() -> bool {
    Path::new("/usr/bin/prosody").exists() && Path::new("/usr/bin/prosodyctl").exists()
}

impl Prosody {
    /// A Prosody with `users` (name, password) registered on `localhost`,
    /// running; `None` (skip) when it is not installed and not required.
    pub fn start(users: &[(&str, &str)]) -> Option<Prosody> {
        if !installed() {
            if std::env::var("DIGESTD_TEST_XMPP").as_deref() == Ok("required") {
                panic!("DIGESTD_TEST_XMPP=required but prosody is not installed");
            }
            eprintln!("skipped: prosody is not installed");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let port = free_port();
        let template =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prosody/prosody.cfg.lua");
        let cfg = std::fs::read_to_string(template)
            .unwrap()
            .replace("@DIR@", &dir.path().display().to_string())
            .replace("@PORT@", &port.to_string());
        std::fs::write(dir.path().join("prosody.cfg.lua"), cfg).unwrap();
        let mut p = Prosody {
            dir,
            port,
            child: None,
        };
        for (name, pw) in users {
            p.register(name, pw);
        }
        p.up();
        Some(p)
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("prosody.cfg.lua")
    }

    pub fn register(&self, name: &str, password: &str) {
        let out = Command::new("prosodyctl")
            .arg("--config")
            .arg(self.config())
            .args(["register", name, "localhost", password])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "prosodyctl register: {out:?}");
    }

    /// Starts the server (again) and waits until it takes connections.
    pub fn up(&mut self) {
        assert!(self.child.is_none(), "already running");
        let log = std::fs::File::create(self.dir.path().join("stdout.log")).unwrap();
        let child = Command::new("prosody")
            .arg("-F")
            .arg("--config")
            .arg(self.config())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < until,
                "prosody did not listen on {}: {}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// kill -9: no goodbye to anyone.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    pub fn server(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prosody.log")).unwrap_or_default()
    }
}

impl Drop for Prosody {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A second client, as a person's chat program: logs in, says it is
/// available (which also fetches what was stored while it was offline),
/// and collects the bodies of the chat messages it gets.
pub struct Reader {
    rt: tokio::runtime::Runtime,
    client: Option<Client>,
}

impl Drop for Reader {
    fn drop(&mut self) {
        // The client's tasks need their runtime while it drops.
        let _in = self.rt.enter();
        self.client.take();
    }
}

impl Reader {
    pub fn login(server: &Prosody, name: &str, password: &str) -> Reader {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let jid: Jid = BareJid::new(&format!("{name}@localhost")).unwrap().into();
        // The client spawns its connection task: inside the runtime.
        let in_rt = rt.enter();
        let mut client = Client::new_plaintext(
            jid,
            password.to_string(),
            DnsConfig::NoSrv {
                host: "127.0.0.1".into(),
                port: server.port,
                resolver: None,
            },
            Timeouts {
                read_timeout: Duration::from_secs(60),
                response_timeout: Duration::from_secs(10),
            },
        );
        drop(in_rt);
        rt.block_on(async {
            digestd::deliver::xmpp::online(&mut client, Duration::from_secs(15))
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            client
                .send_stanza(Presence::available().into())
                .await
                .unwrap();
        });
        Reader {
            rt,
            client: Some(client),
        }
    }

    /// The bodies of chat messages received until `n` have come or
    /// `within` has passed.
    pub fn bodies(&mut self, n: usize, within: Duration) -> Vec<String> {
        let client = self.client.as_mut().expect("open until dropped");
        self.rt.block_on(async {
            let mut got = Vec::new();
            let deadline = tokio::time::sleep(within);
            tokio::pin!(deadline);
            while got.len() < n {
                tokio::select! {
                    ev = client.next() => match ev {
                        Some(Event::Stanza(Stanza::Message(m))) if m.type_ == MessageType::Chat => {
                            if let Some((_, b)) = m.get_best_body(vec![]) {
                                got.push(b.clone());
                            }
                        }
                        Some(Event::Disconnected(e)) => panic!("reader: {e}"),
                        None => panic!("reader: stream closed"),
                        _ => {}
                    },
                    _ = &mut deadline => break,
                }
            }
            got
        })
    }
}
