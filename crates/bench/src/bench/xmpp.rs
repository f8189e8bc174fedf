//! `digestd bench xmpp`: N chat messages to N recipients through the real
//! queue (expansion, the XMPP listener, status updates) into a Prosody it
//! starts on a loopback port, twice in one run (`[xmpp] ack_window` 0,
//! the batch vouched for by its ping alone, then the default, each message
//! journaled as it is acknowledged), beside a bare tokio-xmpp client sending the
//! same N messages on one session and waiting for the server's answer to a
//! ping (the floor), in the same run.
//!
//! A reader account stays online the whole time and counts what arrives,
//! so the server routes every message to a live session (not to its
//! offline store), and the bench checks that all of them came. Prosody is
//! run from the test config in `tests/fixtures/prosody/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use futures_util::StreamExt;
use tokio_xmpp::connect::DnsConfig;
use tokio_xmpp::jid::{BareJid, Jid};
use tokio_xmpp::minidom::Element;
use tokio_xmpp::parsers::message::{Lang, Message, MessageType};
use tokio_xmpp::parsers::ping::Ping;
use tokio_xmpp::parsers::presence::Presence;
use tokio_xmpp::xmlstream::Timeouts;
use tokio_xmpp::{Client, Event, IqRequest, Stanza};

use super::{
    free_port, messages_line, open_empty, request_world, requested_at, requests, wait_listening,
};
use crate::config::{EmailConfig, XmppConfig};
use crate::deliver::queue::{self, Delivery};
use crate::deliver::xmpp::online;
use crate::error::{Error, Result};

#[derive(Args, Debug, Clone)]
pub struct XmppArgs {
    /// Messages (one recipient each).
    #[arg(long, default_value_t = 5_000)]
    pub messages: usize,
    /// Characters in each message body.
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-xmpp.db";
const PROSODY_CFG: &str = include_str!("../../../../tests/fixtures/prosody/prosody.cfg.lua");
const READER: &str = "reader@localhost";
const LOGIN: Duration = Duration::from_secs(15);

/// A Prosody of our own in a temporary directory, killed on drop.
struct Prosody {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Drop for Prosody {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_prosody() -> Result<Prosody> {
    for bin in ["/usr/bin/prosody", "/usr/bin/prosodyctl"] {
        if !Path::new(bin).exists() {
            return Err(Error::invalid(format!(
                "bench xmpp needs {bin} (Debian package prosody: apt-get install prosody)"
            )));
        }
    }
    let port = free_port()?;
    let dir = std::env::temp_dir().join(format!("digestd-bench-xmpp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data"))?;
    let cfg = dir.join("prosody.cfg.lua");
    std::fs::write(
        &cfg,
        PROSODY_CFG
            .replace("@DIR@", &dir.display().to_string())
            .replace("@PORT@", &port.to_string()),
    )?;
    for (user, pw) in [
        ("digestd", "digestd"),
        ("source", "source"),
        ("reader", "reader"),
    ] {
        let out = Command::new("/usr/bin/prosodyctl")
            .arg("--config")
            .arg(&cfg)
            .args(["register", user, "localhost", pw])
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(Error::Storage(format!(
                "prosodyctl register {user}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    let child = Command::new("/usr/bin/prosody")
        .arg("-F")
        .arg("--config")
        .arg(&cfg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let p = Prosody { child, dir, port };
    wait_listening(port, "prosody", Duration::from_secs(10))?;
    Ok(p)
}

fn client(port: u16, name: &str) -> Client {
    let jid: Jid = BareJid::new(&format!("{name}@localhost"))
        .expect("a valid jid")
        .into();
    Client::new_plaintext(
        jid,
        name.to_string(),
        DnsConfig::NoSrv {
            host: "127.0.0.1".into(),
            port,
            resolver: None,
        },
        Timeouts {
            read_timeout: Duration::from_secs(120),
            response_timeout: Duration::from_secs(60),
        },
    )
}

/// The server's answer to a ping: everything sent before it is routed.
async fn ping(c: &mut Client) -> std::result::Result<(), String> {
    let own = c.bound_jid().map(|j| Jid::from(j.domain().to_owned()));
    let answer = c.send_iq(own, IqRequest::Get(Element::from(Ping))).await;
    tokio::pin!(answer);
    loop {
        tokio::select! {
            r = &mut answer => return r.map(|_| ()).map_err(|e| e.to_string()),
            ev = c.next() => if ev.is_none() { return Err("stream closed".into()) },
        }
    }
}

/// The reader, on a thread of its own: online, then counting chat messages
/// until told to stop.
fn spawn_reader(
    port: u16,
    count: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<()>> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let mut c = client(port, "reader");
            let up = async {
                online(&mut c, LOGIN).await?;
                c.send_stanza(Presence::available().into())
                    .await
                    .map_err(|e| e.to_string())?;
                ping(&mut c).await
            };
            let r = up.await;
            let ok = r.is_ok();
            let _ = ready_tx.send(r);
            if !ok {
                return;
            }
            while !stop.load(Ordering::Relaxed) {
                match tokio::time::timeout(Duration::from_millis(200), c.next()).await {
                    Ok(Some(Event::Stanza(Stanza::Message(m)))) if m.type_ == MessageType::Chat => {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(None) => return,
                    _ => {}
                }
            }
            let _ = c.send_end().await;
        });
    });
    ready_rx
        .recv_timeout(Duration::from_secs(30))
        .map_err(|_| Error::Storage("the reader did not come online".into()))?
        .map_err(|e| Error::Storage(format!("reader: {e}")))?;
    Ok(h)
}

/// The floor: one session, N messages, one ping.
fn floor(port: u16, n: usize, body: &str) -> Result<Duration> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut c = client(port, "source");
        online(&mut c, LOGIN).await.map_err(Error::Storage)?;
        let to: Jid = BareJid::new(READER).expect("valid").into();
        let t = Instant::now();
        for _ in 0..n {
            let m = Message::chat(Some(to.clone())).with_body(Lang(String::new()), body.into());
            c.send_stanza(m.into())
                .await
                .map_err(|e| Error::Storage(format!("floor: {e}")))?;
        }
        ping(&mut c).await.map_err(Error::Storage)?;
        let d = t.elapsed();
        let _ = c.send_end().await;
        Ok(d)
    })
}

fn wait_for(count: &AtomicUsize, n: usize) -> Result<()> {
    let until = Instant::now() + Duration::from_secs(120);
    while count.load(Ordering::Relaxed) < n {
        if Instant::now() > until {
            return Err(Error::Storage(format!(
                "the reader got {} of {n} messages",
                count.load(Ordering::Relaxed)
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

pub fn xmpp(
    args: &XmppArgs,
    url: Option<&str>,
    rt: &tokio::runtime::Handle,
    out: &mut dyn Write,
) -> Result<()> {
    if args.messages == 0 || !(1..=100_000).contains(&args.size) {
        return Err(Error::invalid(
            "bench xmpp: --messages must be at least 1 and --size 1-100000",
        ));
    }
    let server = start_prosody()?;
    let port = server.port;
    let body: String = "The quick brown fox jumps over the lazy dog. "
        .chars()
        .cycle()
        .take(args.size)
        .collect();
    let n = args.messages;
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    // Every user's JID is the reader's: N parties, so N pairs and N
    // messages, all read by one live session.
    request_world(&mut c, n, "xmpp", &format!("'{READER}'"), &body)?;
    writeln!(
        out,
        "bench xmpp on {:?}: {} messages of {} characters, into Prosody on 127.0.0.1:{port}",
        c.backend(),
        args.messages,
        args.size
    )?;
    let count = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = spawn_reader(port, count.clone(), stop.clone())?;

    let base1 = floor(port, n, &body)?;
    wait_for(&count, n)?;
    let cfg = XmppConfig {
        transport: crate::config::XmppTransport::Xmpp,
        jid: "digestd@localhost".into(),
        password: "digestd".into(),
        server: format!("127.0.0.1:{port}"),
        tls: false,
        timeout_seconds: 120,
        max_chars: args.size.max(100),
        ..XmppConfig::default()
    };
    // The queue twice, on N requests each: first without acknowledgement
    // waits (the batch vouched for by its ping alone, as before the
    // window), then with the default window, each message journaled as
    // its acknowledgement comes.
    let no_window = pass(
        &mut c,
        &XmppConfig {
            ack_window: 0,
            ..cfg.clone()
        },
        n,
        rt,
    )?;
    wait_for(&count, 2 * n)?;
    requests(&mut c, n, n, "xmpp", &body)?;
    let window = pass(&mut c, &cfg, n, rt)?;
    wait_for(&count, 3 * n)?;
    let base2 = floor(port, n, &body)?;
    wait_for(&count, 4 * n)?;
    stop.store(true, Ordering::Relaxed);
    let _ = reader.join();
    let line = |out: &mut dyn Write, what: &str, d: Duration| messages_line(out, what, n, d);
    line(out, "bare tokio-xmpp client, one session (run 1)", base1)?;
    line(out, "bare tokio-xmpp client, one session (run 2)", base2)?;
    line(
        out,
        "digestd queue, ack_window 0 (ping per batch only)",
        no_window,
    )?;
    line(
        out,
        &format!(
            "digestd queue, ack_window {} (journal per ack)",
            cfg.ack_window
        ),
        window,
    )?;
    let base = base1.min(base2);
    writeln!(
        out,
        "ratio digestd/bare client: {:.2} (ack_window 0), {:.2} (ack_window {}); the reader got all {} messages",
        base.as_secs_f64() / no_window.as_secs_f64(),
        base.as_secs_f64() / window.as_secs_f64(),
        cfg.ack_window,
        4 * n
    )?;
    Ok(())
}

/// One timed queue pass over the pending requests with `cfg`, checking
/// that it finished all `n`.
fn pass(
    c: &mut crate::db::DbConn,
    cfg: &XmppConfig,
    n: usize,
    rt: &tokio::runtime::Handle,
) -> Result<Duration> {
    let mut d = Delivery::new(&EmailConfig::default(), rt)?.with_xmpp(cfg)?;
    let t = Instant::now();
    let report = queue::run_pass(c, &mut d, requested_at())?;
    let took = t.elapsed();
    d.shutdown();
    if report.finished != n {
        return Err(Error::Storage(format!(
            "the queue finished {} of {n} requests ({report})",
            report.finished
        )));
    }
    Ok(took)
}
