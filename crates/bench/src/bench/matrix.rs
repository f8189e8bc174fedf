//! `digestd bench matrix`: N messages to N recipients through the real
//! queue (expansion, the Matrix listener, status updates) into a Synapse
//! it starts on a loopback port ([`super::synapse`]), beside a bare
//! reqwest client sending the same events (`PUT …/send/m.room.message/
//! {txnId}`, one at a time, as the listener does) to the same rooms as the
//! same account, alternated `--rounds` times in one run; the faster run of
//! each side counts.
//!
//! Every recipient's address is one of `--rooms` rooms a reader account
//! made and invited the service account to; after the runs the reader
//! reads every room back and the bench fails unless each message, the
//! queue's and the floor's, is there exactly once.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};

use super::cpu::{per_message, Cpu};
use super::synapse::Synapse;
use super::{
    messages_line, open_empty, request_world, requested_at, requests, text_of, timed_pass,
};
use crate::config::{EmailConfig, MatrixConfig, MatrixTransport};
use crate::deliver::queue::Delivery;
use crate::error::{Error, Result};

#[derive(Args, Debug, Clone)]
pub struct MatrixArgs {
    /// Messages in each run (one recipient each).
    #[arg(long, default_value_t = 1_000)]
    pub messages: usize,
    /// Characters in each message's text.
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
    /// Rooms the messages are spread over.
    #[arg(long, default_value_t = 4)]
    pub rooms: usize,
    /// Runs of each side, alternated.
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-matrix.db";
const BOT: (&str, &str) = ("digestd", "digestd-bench-password");
const READER: (&str, &str) = ("reader", "reader-bench-password");
/// The floor's messages are numbered from here, clear of the requests'.
const FLOOR_IDS: i64 = 1_000_000_000;
/// What every message's text starts with, before its number.
const MARK: &str = "Bench message ";

/// An account's session over the client-server API, as a bare client.
struct Account {
    base: String,
    token: String,
    client: reqwest::blocking::Client,
}

impl Account {
    fn login(s: &Synapse, (user, password): (&str, &str), device: &str) -> Result<Account> {
        let mut a = Account {
            base: s.url(),
            token: String::new(),
            client: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .map_err(remote)?,
        };
        let v = a.call(
            reqwest::Method::POST,
            &["login"],
            "",
            &json!({
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": user},
                "password": password,
                "device_id": device,
            }),
        )?;
        a.token = v["access_token"].as_str().unwrap_or_default().to_string();
        Ok(a)
    }

    /// `method` on `/_matrix/client/v3/{segments}{query}`; the answer's
    /// JSON, or an error unless 2xx.
    fn call(
        &self,
        method: reqwest::Method,
        segments: &[&str],
        query: &str,
        body: &Value,
    ) -> Result<Value> {
        let mut url = reqwest::Url::parse(&self.base).map_err(|e| Error::Storage(e.to_string()))?;
        url.path_segments_mut()
            .map_err(|_| Error::Storage("a base URL".into()))?
            .extend(["_matrix", "client", "v3"])
            .extend(segments);
        let url = format!("{url}{query}");
        let mut req = self.client.request(method, &url);
        if !body.is_null() {
            req = req.json(body);
        }
        if !self.token.is_empty() {
            req = req.bearer_auth(&self.token);
        }
        let resp = req.send().map_err(remote)?;
        let status = resp.status();
        let text = resp.text().map_err(remote)?;
        if !status.is_success() {
            return Err(Error::Storage(format!(
                "matrix {segments:?}: {status} {text}"
            )));
        }
        serde_json::from_str(&text).map_err(|e| Error::Storage(format!("matrix answer: {e}")))
    }

    /// A private room with `invite` invited; its id.
    fn create_room(&self, invite: &str) -> Result<String> {
        let body = json!({"preset": "private_chat", "invite": [invite]});
        let v = self.call(reqwest::Method::POST, &["createRoom"], "", &body)?;
        Ok(v["room_id"].as_str().unwrap_or_default().to_string())
    }

    fn join(&self, room: &str) -> Result<()> {
        self.call(reqwest::Method::POST, &["join", room], "", &json!({}))
            .map(|_| ())
    }

    fn send(&self, room: &str, txn: &str, content: &Value) -> Result<()> {
        let path = ["rooms", room, "send", "m.room.message", txn];
        self.call(reqwest::Method::PUT, &path, "", content)
            .map(|_| ())
    }

    /// The number after [`MARK`] in each text message of `room`.
    fn numbers(&self, room: &str) -> Result<Vec<i64>> {
        let mut out = Vec::new();
        let mut from = String::new();
        loop {
            let query = format!("?dir=b&limit=1000{from}");
            let path = ["rooms", room, "messages"];
            let v = self.call(reqwest::Method::GET, &path, &query, &Value::Null)?;
            let chunk = v["chunk"].as_array().cloned().unwrap_or_default();
            for e in chunk.iter().filter(|e| e["type"] == "m.room.message") {
                let body = e["content"]["body"].as_str().unwrap_or_default();
                let n = body.split_once(MARK).and_then(|(_, rest)| {
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    digits.parse().ok()
                });
                out.push(n.unwrap_or(-1));
            }
            match v["end"].as_str() {
                Some(end) if !chunk.is_empty() => from = format!("&from={end}"),
                _ => return Ok(out),
            }
        }
    }
}

fn remote(e: reqwest::Error) -> Error {
    Error::Storage(format!("matrix: {e}"))
}

/// The room of the message to user `i` (from 1): the queue's and the
/// floor's alike.
fn room_of(rooms: &[String], i: usize) -> &str {
    &rooms[i % rooms.len()]
}

/// The floor: the same events as the queue's, one at a time, as the
/// service account on a device of its own; message `i` of round `round`
/// is numbered `FLOOR_IDS + round × n + i`.
fn floor(a: &Account, rooms: &[String], n: usize, round: usize, body: &str) -> Result<Duration> {
    let at = requested_at().naive_utc();
    let events: Vec<(i64, Value)> = (1..=n)
        .map(|i| {
            let id = FLOOR_IDS + (round * n + i) as i64;
            let doc =
                crate::deliver::webhook::body::notification(id, &format!("{MARK}{id}"), body, at);
            let content = crate::deliver::matrix::body::content(doc.to_string().as_bytes())
                .map_err(Error::Storage)?;
            Ok((id, content))
        })
        .collect::<Result<_>>()?;
    let t = Instant::now();
    for (i, (id, content)) in events.iter().enumerate() {
        a.send(room_of(rooms, i + 1), &format!("floor_{id}"), content)?;
    }
    Ok(t.elapsed())
}

/// One timed queue pass over the pending requests through the Matrix
/// listener of `cfg`.
fn pass(
    c: &mut crate::db::DbConn,
    cfg: &MatrixConfig,
    n: usize,
    rt: &tokio::runtime::Handle,
) -> Result<Duration> {
    let email = EmailConfig::default();
    timed_pass(c, Delivery::new(&email, rt)?.with_matrix(cfg, &email)?, n)
}

/// Fails unless every message of every run is in the rooms exactly once.
fn check_arrived(reader: &Account, rooms: &[String], n: usize, rounds: usize) -> Result<usize> {
    let mut seen: HashMap<i64, usize> = HashMap::new();
    for room in rooms {
        for k in reader.numbers(room)? {
            *seen.entry(k).or_default() += 1;
        }
    }
    let total = rounds * n;
    let want: HashSet<i64> = (1..=total as i64)
        .chain((1..=total as i64).map(|k| FLOOR_IDS + k))
        .collect();
    let missing = want.iter().filter(|k| !seen.contains_key(k)).count();
    let twice = seen.values().filter(|&&c| c > 1).count();
    let stray = seen.keys().filter(|k| !want.contains(k)).count();
    if missing + twice + stray > 0 {
        return Err(Error::Storage(format!(
            "the rooms hold {} events: {missing} messages missing, {twice} more than once, {stray} not the bench's",
            seen.values().sum::<usize>()
        )));
    }
    Ok(2 * total)
}

/// The reader with its rooms, the floor's session and the listener's
/// settings.
struct Sides {
    reader: Account,
    rooms: Vec<String>,
    source: Account,
    cfg: MatrixConfig,
}

/// The reader makes `rooms` rooms and invites the service account, whose
/// floor session joins them; the listener gets a device of its own.
fn sides(server: &Synapse, rooms: usize) -> Result<Sides> {
    let bot = format!("@{}:localhost", BOT.0);
    let reader = Account::login(server, READER, "READER")?;
    let rooms: Vec<String> = (0..rooms)
        .map(|_| reader.create_room(&bot))
        .collect::<Result<_>>()?;
    let source = Account::login(server, BOT, "FLOOR")?;
    for r in &rooms {
        source.join(r)?;
    }
    // Logged in before the clock starts (a password login is a slow hash
    // on the server).
    let cfg = MatrixConfig {
        transport: MatrixTransport::Matrix,
        homeserver: server.url(),
        user: bot,
        access_token: Account::login(server, BOT, "DIGESTD")?.token,
        allow_http: true,
        timeout_seconds: 120,
        ..MatrixConfig::default()
    };
    Ok(Sides {
        reader,
        rooms,
        source,
        cfg,
    })
}

pub fn matrix(
    args: &MatrixArgs,
    url: Option<&str>,
    rt: &tokio::runtime::Handle,
    out: &mut dyn Write,
) -> Result<()> {
    if args.messages == 0
        || !(1..=20_000).contains(&args.size)
        || !(1..=100).contains(&args.rooms)
        || !(1..=20).contains(&args.rounds)
    {
        return Err(Error::invalid(
            "bench matrix: --messages must be at least 1, --size 1-20000, --rooms 1-100, --rounds 1-20",
        ));
    }
    let (n, rounds) = (args.messages, args.rounds);
    let body = text_of(args.size);
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let server = Synapse::start(&[BOT, READER])?;
    let Sides {
        reader,
        rooms,
        source,
        cfg,
    } = sides(&server, args.rooms)?;
    let mut c = db.conn()?;
    let address = format!(
        "CASE i % {} {} END",
        rooms.len(),
        rooms
            .iter()
            .enumerate()
            .map(|(k, r)| format!("WHEN {k} THEN '{r}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    request_world(&mut c, n, "matrix", &address, &body)?;
    writeln!(
        out,
        "bench matrix on {:?}: {n} messages of {} characters a run over {} rooms, {rounds} runs a side, into Synapse on 127.0.0.1:{}",
        c.backend(),
        args.size,
        rooms.len(),
        server.port
    )?;
    let (mut floors, mut queues) = (Vec::new(), Vec::new());
    let synapse_cpu = || Cpu::of(&server.pid().unwrap_or(0).to_string()).unwrap_or_default();
    let (mut cpu_floor, mut cpu_queue) = ([Duration::ZERO; 2], [Duration::ZERO; 2]);
    for round in 0..rounds {
        let before = (Cpu::of("self").unwrap_or_default(), synapse_cpu());
        floors.push(floor(&source, &rooms, n, round, &body)?);
        let mid = (Cpu::of("self").unwrap_or_default(), synapse_cpu());
        if round > 0 {
            requests(&mut c, n, round * n, "matrix", &body)?;
        }
        let ready = (Cpu::of("self").unwrap_or_default(), synapse_cpu());
        queues.push(pass(&mut c, &cfg, n, rt)?);
        let after = (Cpu::of("self").unwrap_or_default(), synapse_cpu());
        cpu_floor[0] += mid.0.own - before.0.own;
        cpu_floor[1] += mid.1.own - before.1.own;
        cpu_queue[0] += after.0.own - ready.0.own;
        cpu_queue[1] += after.1.own - ready.1.own;
    }
    let arrived = check_arrived(&reader, &rooms, n, rounds)?;
    for (k, (f, q)) in floors.iter().zip(&queues).enumerate() {
        messages_line(out, &format!("bare reqwest client (run {})", k + 1), n, *f)?;
        messages_line(out, &format!("digestd queue (run {})", k + 1), n, *q)?;
    }
    let all = rounds * n;
    writeln!(
        out,
        "cpu per message, µs: floor: bench {:.0}, synapse {:.0}; queue: digestd {:.0}, synapse {:.0}",
        per_message(cpu_floor[0], all),
        per_message(cpu_floor[1], all),
        per_message(cpu_queue[0], all),
        per_message(cpu_queue[1], all),
    )?;
    let best = |v: &[Duration]| v.iter().min().copied().unwrap_or_default();
    writeln!(
        out,
        "ratio digestd/bare client (fastest runs): {:.2}; every one of {arrived} messages arrived once",
        best(&floors).as_secs_f64() / best(&queues).as_secs_f64(),
    )?;
    Ok(())
}
