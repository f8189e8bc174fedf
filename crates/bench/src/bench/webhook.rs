//! `digestd bench webhook`: N notifications to N recipients through the
//! real queue (expansion, the webhook listener with its URL policy and
//! Standard Webhooks signing, status updates) into a receiver on a
//! loopback port, beside a bare reqwest client posting the same bodies,
//! signed the same way, to the same receiver (the floor), alternated
//! `--rounds` times in one run; the faster run of each side counts. Both
//! sides post `--concurrency` (4, `[webhook] concurrency`'s default) at
//! once: the listener in its lanes, the floor on as many threads, each
//! with its own kept connection.
//!
//! The receiver is a small HTTP/1.1 responder on threads of its own (one
//! a connection, keep-alive), cheap enough not to be the bound: it checks
//! each message's signature, counts its `webhook-id`, waits
//! `--latency-ms` (0: none; a real endpoint's round trip and work) and
//! answers 200 with no body. The bench fails unless every message of
//! every run arrived exactly once, correctly signed.
//!
//! Each run also prints how busy the machine's cores were while it ran
//! (`/proc/stat`, a PostgreSQL server's work included) and this process's
//! CPU time: a floor that keeps every core busy leaves the queue no idle
//! core to do its own work on, and the ratio is then the two sides' CPU
//! per message rather than how well the queue overlaps it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use diesel::connection::SimpleConnection;

use super::cpu::{Cpu, Machine};
use super::{
    messages_line, open_empty, request_world, requested_at, requests, text_of, timed_pass, PARTY0,
};
use crate::config::{EmailConfig, WebhookConfig, WebhookTransport};
use crate::deliver::listener::{Delivered, DeliveryError, Listener, Outgoing};
use crate::deliver::queue::Delivery;
use crate::deliver::webhook::{body as hook, sign};
use crate::error::{Error, Result};
use crate::parties::Channel;

#[derive(Args, Debug, Clone)]
pub struct WebhookArgs {
    /// Messages in each run (one recipient each).
    #[arg(long, default_value_t = 10_000)]
    pub messages: usize,
    /// Characters in each notification's message.
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
    /// Runs of each side, alternated.
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
    /// Posts in flight at once, on each side (1-64).
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Milliseconds the receiver waits before it answers each post
    /// (0-10000).
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-webhook.db";
/// Every recipient's endpoint secret: the Standard Webhooks example's.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// The floor's messages are numbered from here, clear of the requests'.
const FLOOR_IDS: usize = 1_000_000_000;

/// What the receiver took: each `webhook-id` with how many times, and the
/// messages whose signature did not verify.
#[derive(Default)]
struct Seen {
    ids: HashMap<String, usize>,
    bad_signatures: usize,
}

/// Starts the receiver on a loopback port; its threads live as long as
/// the process (the bench is a process of its own).
fn start_receiver(latency: Duration) -> Result<(u16, Arc<Mutex<Seen>>)> {
    let listener = TcpListener::bind(("127.0.0.1", 0))?;
    let port = listener.local_addr()?.port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let shared = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let seen = shared.clone();
            std::thread::spawn(move || {
                let _ = serve(stream, &seen, latency);
            });
        }
    });
    Ok((port, seen))
}

/// One connection: requests read one after another, each answered 200
/// after `latency`.
fn serve(stream: TcpStream, seen: &Mutex<Seen>, latency: Duration) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut r = BufReader::new(stream.try_clone()?);
    let mut w = stream;
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let (mut len, mut id, mut ts, mut sig) = (0, String::new(), 0i64, String::new());
        loop {
            line.clear();
            r.read_line(&mut line)?;
            let Some((k, v)) = line.trim_end().split_once(':') else {
                break;
            };
            let v = v.trim();
            match k.to_ascii_lowercase().as_str() {
                "content-length" => len = v.parse().unwrap_or(0),
                "webhook-id" => id = v.to_string(),
                "webhook-timestamp" => ts = v.parse().unwrap_or(0),
                "webhook-signature" => sig = v.to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body)?;
        let signed = sign::signature(&id, ts, SECRET, &body).is_ok_and(|s| s == sig);
        {
            let mut s = seen.lock().expect("the receiver's count");
            *s.ids.entry(id).or_default() += 1;
            s.bad_signatures += usize::from(!signed);
        }
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        w.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")?;
    }
}

/// The floor's documents and clients, made before it is timed: the same
/// documents the queue posts, signed the same way, shared among `lanes`
/// threads, each with a kept connection of its own; message `i` of round
/// `round` is numbered `FLOOR_IDS + round × n + i`.
struct Floor {
    shares: Vec<Vec<(String, String, String)>>,
    clients: Vec<reqwest::blocking::Client>,
    ts: i64,
}

impl Floor {
    fn new(port: u16, n: usize, round: usize, body: &str, lanes: usize) -> Result<Floor> {
        let at = requested_at();
        let mut shares: Vec<Vec<(String, String, String)>> = vec![Vec::new(); lanes];
        for i in 1..=n {
            let k = FLOOR_IDS + round * n + i;
            let subject = format!("Bench message {k}");
            let doc = hook::notification(k as i64, &subject, body, at.naive_utc());
            let url = format!("http://127.0.0.1:{port}/hook/{i}");
            shares[(i - 1) % lanes].push((format!("floor_{k}"), url, doc.to_string()));
        }
        Ok(Floor {
            shares,
            clients: (0..lanes).map(|_| client()).collect::<Result<Vec<_>>>()?,
            ts: at.timestamp(),
        })
    }

    /// Each thread posts its share one at a time; timed.
    fn run(self) -> Result<Duration> {
        let t = Instant::now();
        let ts = self.ts;
        std::thread::scope(|s| {
            let posting: Vec<_> = self
                .shares
                .into_iter()
                .zip(&self.clients)
                .map(|(share, client)| s.spawn(move || post(client, share, ts)))
                .collect();
            posting
                .into_iter()
                .try_for_each(|p| p.join().expect("a floor thread"))
        })?;
        Ok(t.elapsed())
    }
}

/// A client of its own for one of the floor's threads: one kept
/// connection, no redirect, no proxy.
fn client() -> Result<reqwest::blocking::Client> {
    reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .pool_max_idle_per_host(1)
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(remote)
}

/// One floor thread's share, posted one after another.
fn post(
    client: &reqwest::blocking::Client,
    share: Vec<(String, String, String)>,
    ts: i64,
) -> Result<()> {
    for (id, url, doc) in share {
        let headers = sign::headers(&id, ts, SECRET, doc.as_bytes())?;
        let mut req = client.post(url).body(doc);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let resp = req.send().map_err(remote)?;
        let status = resp.status();
        resp.bytes().map_err(remote)?;
        if !status.is_success() {
            return Err(Error::Storage(format!("the receiver answered {status}")));
        }
    }
    Ok(())
}

fn remote(e: reqwest::Error) -> Error {
    Error::Storage(format!("webhook floor: {e}"))
}

/// One timed queue pass over the pending requests through the webhook
/// listener of `cfg`.
fn pass(
    c: &mut crate::db::DbConn,
    cfg: &WebhookConfig,
    n: usize,
    rt: &tokio::runtime::Handle,
) -> Result<Duration> {
    let email = EmailConfig::default();
    timed_pass(c, Delivery::new(&email, rt)?.with_webhook(cfg, &email)?, n)
}

/// A webhook listener that posts nothing and answers "accepted" at once:
/// a pass through it is the queue's own work without the posts.
struct AtOnce;

impl Listener for AtOnce {
    fn key(&self) -> Channel {
        Channel::Webhook
    }

    fn send_raw(&mut self, _: &Outgoing) -> std::result::Result<Delivered, DeliveryError> {
        Ok(Delivered {
            code: Some(200),
            text: "accepted".into(),
            remote_id: None,
        })
    }
}

/// The queue's own share: a pass over the pending requests with
/// [`AtOnce`] in the webhook listener's place.
fn without_posts(
    c: &mut crate::db::DbConn,
    n: usize,
    rt: &tokio::runtime::Handle,
) -> Result<Duration> {
    let d = Delivery::new(&EmailConfig::default(), rt)?.with_listener(Box::new(AtOnce));
    timed_pass(c, d, n)
}

/// Fails unless the receiver took every message of every run exactly
/// once, each signed right; the number it took.
fn check_arrived(seen: &Mutex<Seen>, n: usize, rounds: usize) -> Result<usize> {
    let seen = seen.lock().expect("the receiver's count");
    let want: Vec<String> = (0..rounds)
        .flat_map(|round| (1..=n).map(move |i| (round * n + i, i)))
        .flat_map(|(k, i)| {
            let party = PARTY0 + i as i64;
            [
                hook::message_id(&[k as i64], party),
                format!("floor_{}", FLOOR_IDS + k),
            ]
        })
        .collect();
    let missing = want.iter().filter(|id| !seen.ids.contains_key(*id)).count();
    let twice = seen.ids.values().filter(|&&c| c > 1).count();
    let took: usize = seen.ids.values().sum();
    if missing + twice + seen.bad_signatures > 0 || took != want.len() {
        return Err(Error::Storage(format!(
            "the receiver took {took} messages: {missing} missing, {twice} more than once, {} badly signed",
            seen.bad_signatures
        )));
    }
    Ok(took)
}

pub fn webhook(
    args: &WebhookArgs,
    url: Option<&str>,
    rt: &tokio::runtime::Handle,
    out: &mut dyn Write,
) -> Result<()> {
    if args.messages == 0
        || !(1..=100_000).contains(&args.size)
        || !(1..=20).contains(&args.rounds)
        || !(1..=64).contains(&args.concurrency)
        || args.latency_ms > 10_000
    {
        return Err(Error::invalid(
            "bench webhook: --messages must be at least 1, --size 1-100000, --rounds 1-20, \
             --concurrency 1-64, --latency-ms 0-10000",
        ));
    }
    let (n, rounds) = (args.messages, args.rounds);
    let body = text_of(args.size);
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let (port, seen) = start_receiver(Duration::from_millis(args.latency_ms))?;
    let mut c = db.conn()?;
    let address = format!("'http://127.0.0.1:{port}/hook/' || i");
    request_world(&mut c, n, "webhook", &address, &body)?;
    c.batch_execute(&format!(
        "UPDATE contact_points SET secret = '{SECRET}' WHERE channel = 'webhook'"
    ))?;
    writeln!(
        out,
        "bench webhook on {:?}: {n} notifications of {} characters a run, {rounds} runs a side, \
         {} in flight, into a receiver on 127.0.0.1:{port} answering after {} ms",
        c.backend(),
        args.size,
        args.concurrency,
        args.latency_ms,
    )?;
    let cfg = WebhookConfig {
        transport: WebhookTransport::Http,
        allow_http: true,
        allow_private: true,
        timeout_seconds: 60,
        concurrency: args.concurrency,
    };
    let backend = super::smtp::backend_pid(&mut c);
    let backend = backend.as_deref();
    let (mut floors, mut queues) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let floor = Floor::new(port, n, round, &body, args.concurrency)?;
        floors.push(Load::of(backend, || floor.run())?);
        if round > 0 {
            requests(&mut c, n, round * n, "webhook", &body)?;
        }
        queues.push(Load::of(backend, || pass(&mut c, &cfg, n, rt))?);
    }
    let took = check_arrived(&seen, n, rounds)?;
    // n more requests, numbered after the runs'.
    requests(&mut c, n, rounds * n, "webhook", &body)?;
    let own = Load::of(backend, || without_posts(&mut c, n, rt))?;
    for (k, (f, q)) in floors.iter().zip(&queues).enumerate() {
        f.line(out, &format!("bare reqwest client (run {})", k + 1), n)?;
        q.line(out, &format!("digestd queue (run {})", k + 1), n)?;
    }
    own.line(out, "digestd queue, nothing posted (its own work)", n)?;
    let (f, q) = (fastest(&floors), fastest(&queues));
    writeln!(
        out,
        "ratio digestd/bare client (fastest runs): {:.2}; the receiver took each of {took} messages once, signed",
        f.took.as_secs_f64() / q.took.as_secs_f64(),
    )?;
    // On cores the floor fills, the queue cannot do better than the
    // floor's CPU a message against its own.
    writeln!(
        out,
        "CPU a message (fastest runs): bare client {:.0} µs, digestd {:.0} µs: with every core busy \
         the ratio is at most {:.2}",
        f.per_message(n),
        q.per_message(n),
        f.per_message(n) / q.per_message(n).max(1.0),
    )?;
    Ok(())
}

/// The fastest of a side's runs (there is one at least).
fn fastest(runs: &[Load]) -> &Load {
    runs.iter().min_by_key(|l| l.took).expect("one run a side")
}

/// A timed run with the machine's load while it ran.
struct Load {
    took: Duration,
    /// The share of the machine's cores busy, 0 to 1.
    busy: Option<f64>,
    /// This process's CPU time (the receiver's threads included), and
    /// the PostgreSQL backend's serving the queue's connection.
    cpu: Duration,
    backend: Option<Duration>,
}

impl Load {
    fn of(backend: Option<&str>, run: impl FnOnce() -> Result<Duration>) -> Result<Load> {
        let cpu = |pid: &str| Cpu::of(pid).unwrap_or_default().own;
        let machine = Machine::now();
        let before = (cpu("self"), backend.map(cpu));
        let took = run()?;
        Ok(Load {
            took,
            busy: Machine::now().busy_since(machine),
            cpu: cpu("self").saturating_sub(before.0),
            backend: backend
                .zip(before.1)
                .map(|(pid, b)| cpu(pid).saturating_sub(b)),
        })
    }

    /// Every process's CPU (this one, the backend) a message, µs.
    fn per_message(&self, n: usize) -> f64 {
        super::cpu::per_message(self.cpu + self.backend.unwrap_or_default(), n)
    }

    fn line(&self, out: &mut dyn Write, what: &str, n: usize) -> Result<()> {
        messages_line(out, what, n, self.took)?;
        let busy = self
            .busy
            .map_or("unknown".to_string(), |b| format!("{:.0}%", b * 100.0));
        let backend = self.backend.map_or(String::new(), |b| {
            format!(", its PostgreSQL backend {:.2} s", b.as_secs_f64())
        });
        writeln!(
            out,
            "    cores busy {busy}; CPU: this process {:.2} s{backend} ({:.0} µs a message)",
            self.cpu.as_secs_f64(),
            self.per_message(n),
        )?;
        Ok(())
    }
}
