//! `bench http`: the HTTP server in this process on a loopback port, driven
//! by the bench's own many-connection client (reqwest, keep-alive), each
//! route measured right after the floor: `GET /healthz`, a constant with no
//! database work, served by the same server in the same run.
//!
//! - a conditional `changed` feed answered 304 (goal ≥ 0.5 × the floor);
//! - a full `changed` feed of 50 entries (goal ≥ 0.2 × the floor);
//! - `POST /api/v1/modifications` in batches of 1,000 rows, beside the
//!   `digestd record` path (parse, validate, resolve, one transaction) on
//!   the same back end and the same number of rows (goal ≥ 0.7 × its rows/s).

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use clap::Args;

use super::{open_empty, rate, ServeHttp, Served};
use crate::access::{self, Scope};
use crate::clock::{Clock, FixedClock};
use crate::config::Config;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::{ingest, items, parties};

#[derive(Args, Debug, Clone)]
pub struct HttpArgs {
    /// GET requests per measured route (and per floor run).
    #[arg(long, default_value_t = 20_000)]
    pub requests: usize,
    /// Concurrent keep-alive connections of the client.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Batches of 1,000 modifications posted (and recorded by the record path).
    #[arg(long, default_value_t = 50)]
    pub batches: usize,
    /// Alternated rounds of the write comparison (record, then POST); the
    /// median ratio is the figure.
    #[arg(long, default_value_t = 5)]
    pub write_rounds: usize,
}

/// Where `bench http` runs when no --db is given (recreated each run).
const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-http.db";
const BATCH: usize = 1_000;
const FEED_ENTRIES: usize = 50;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).unwrap()
}

/// `n` modification lines (JSON objects) for `collection`, items from `first`.
pub(super) fn lines(collection: &str, first: usize, n: usize) -> Vec<String> {
    (first..first + n)
        .map(|i| {
            let item = uuid::Uuid::from_u128(0xbe7c_0000_0000_0000_0000_0000_0000_0000 + i as u128);
            let at = t0() + chrono::Duration::milliseconds(i as i64);
            format!(
                r#"{{"collection":"{collection}","item":"{item}","actor":"bench","action":"edited","at":"{}","title":"Item {i}","kind":"event","changes":[{{"attribute":"location","old":"Room {i}","new":"Room {}"}}]}}"#,
                at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                i + 1
            )
        })
        .collect()
}

pub fn http(
    args: &HttpArgs,
    url: Option<&str>,
    serve: ServeHttp,
    out: &mut dyn Write,
) -> Result<()> {
    if args.requests == 0 || args.connections == 0 || args.batches == 0 || args.write_rounds == 0 {
        return Err(Error::invalid(
            "bench http: --requests, --connections, --batches and --write-rounds must be at least 1",
        ));
    }
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    parties::create_user(
        &mut c,
        t0(),
        &parties::NewUser {
            name: "bench".into(),
            timezone: "UTC".into(),
            ..Default::default()
        },
    )?;
    let feed = items::create_collection(&mut c, t0(), "Feed", None)?;
    let posts = items::create_collection(&mut c, t0(), "Posts", None)?;
    let (_, token) = access::add_token(&mut c, t0(), "bench", Scope::Admin)?;
    // The feed's 50 items, each modified once in the window.
    let mods = ingest::parse_all(
        &mut c,
        lines(&feed.uuid, 0, FEED_ENTRIES).join("\n").as_bytes(),
        &ingest::AtBounds::ANY,
    )?;
    ingest::write_batched(&mut c, &mods, BATCH, &mut |_| {})?;
    drop(c);

    writeln!(
        out,
        "bench http: {} requests per GET run over {} connections; {} batches of {BATCH} rows posted; {:?}, {} pooled connections",
        args.requests,
        args.connections,
        args.batches,
        db.backend(),
        Config::default().database.pool_size
    )?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let clock: Arc<dyn Clock> = Arc::new(FixedClock::new(t0() + chrono::Duration::days(1)));
    let mut cfg = Config::default();
    cfg.http.listen = "127.0.0.1:0".into();
    let result = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&cfg.http.listen).await?;
        let base = format!("http://{}", listener.local_addr()?);
        // The server's own pool, as `digestd web` opens it ([database]
        // pool_size), not the bench's small one.
        let served = Db::open(url.unwrap_or(DEFAULT_BENCH_DB), cfg.database.pool_size)?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(Served {
            listener,
            db: served,
            cfg: cfg.clone(),
            clock,
            metrics: Default::default(),
            shutdown: Box::pin(async {
                let _ = stopped.await;
            }),
        }));
        let r = measure(args, &db, &base, &token, &feed.uuid, &posts.uuid, out).await;
        let _ = stop.send(());
        let _ = server.await;
        r
    });
    result
}

async fn measure(
    args: &HttpArgs,
    db: &Db,
    base: &str,
    token: &str,
    feed: &str,
    posts: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.connections)
        .build()
        .map_err(|e| Error::Storage(format!("bench client: {e}")))?;
    let auth = format!("Bearer {token}");
    let feed_url = format!(
        "{base}/atom/collection/{feed}/changed?start=2026-11-23T00:00:00Z&end=2026-11-24T00:00:00Z"
    );
    let etag = feed_etag(&client, &feed_url, &auth).await?;
    let gets = Gets {
        args,
        client: &client,
    };
    gets.routes(base, feed_url, &auth, etag, out).await?;
    writes(args, db, base, &auth, posts, out).await
}

/// The feed once, to check it and learn its ETag.
async fn feed_etag(client: &reqwest::Client, feed_url: &str, auth: &str) -> Result<String> {
    let first = client
        .get(feed_url)
        .header("authorization", auth)
        .send()
        .await
        .map_err(|e| Error::Storage(format!("bench: {e}")))?;
    let etag = first
        .headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
        .ok_or_else(|| {
            Error::Storage(format!("feed answered {} without an ETag", first.status()))
        })?;
    let body = first.text().await.unwrap_or_default();
    let entries = body.matches("<entry>").count() + body.matches("<entry ").count();
    if entries != FEED_ENTRIES {
        return Err(Error::Storage(format!(
            "the feed has {entries} entries, not {FEED_ENTRIES}"
        )));
    }
    Ok(etag)
}

/// The GET runs: `--requests` requests over `--connections` connections
/// of one client.
struct Gets<'a> {
    args: &'a HttpArgs,
    client: &'a reqwest::Client,
}

impl Gets<'_> {
    async fn get(
        &self,
        url: String,
        headers: Vec<(&'static str, String)>,
        want: u16,
    ) -> Result<Duration> {
        load(
            self.client,
            self.args.requests,
            self.args.connections,
            url,
            headers,
            want,
        )
        .await
    }

    /// A floor run's line; its rate.
    fn floor_line(&self, out: &mut dyn Write, d: Duration) -> Result<f64> {
        let r = rate(self.args.requests, d);
        writeln!(
            out,
            "{:<52} {:>8.2} s {:>10.0} req/s",
            "floor: GET /healthz (constant, no database)",
            d.as_secs_f64(),
            r
        )?;
        Ok(r)
    }

    // The ratio is against the faster of the floors run just before and
    // just after the route: a floor slowed by something else on the
    // machine (PostgreSQL's autovacuum after the load, another session)
    // would flatter the route.
    fn route_line(
        &self,
        out: &mut dyn Write,
        what: &str,
        d: Duration,
        floors: (f64, f64),
        goal: f64,
    ) -> std::io::Result<()> {
        let r = rate(self.args.requests, d);
        writeln!(
            out,
            "{what:<52} {:>8.2} s {:>10.0} req/s  {:.2}x the faster floor around it (goal >= {goal})",
            d.as_secs_f64(),
            r,
            r / floors.0.max(floors.1)
        )
    }

    /// Each route between two floor runs: the feed answered 304, then in
    /// full.
    async fn routes(
        &self,
        base: &str,
        feed_url: String,
        auth: &str,
        etag: String,
        out: &mut dyn Write,
    ) -> Result<()> {
        let requests = self.args.requests;
        let healthz = format!("{base}/healthz");
        // Untimed: every connection opened before the first floor.
        self.get(healthz.clone(), vec![], 200).await?;
        let d = self.get(healthz.clone(), vec![], 200).await?;
        let f1 = self.floor_line(out, d)?;
        let d304 = self
            .get(
                feed_url.clone(),
                vec![("authorization", auth.to_string()), ("if-none-match", etag)],
                304,
            )
            .await?;
        let d = self.get(healthz.clone(), vec![], 200).await?;
        let f2 = rate(requests, d);
        self.route_line(
            out,
            "GET changed feed, If-None-Match: 304",
            d304,
            (f1, f2),
            0.5,
        )?;
        self.floor_line(out, d)?;
        let dfull = self
            .get(feed_url, vec![("authorization", auth.to_string())], 200)
            .await?;
        let d = self.get(healthz.clone(), vec![], 200).await?;
        let f3 = rate(requests, d);
        self.route_line(
            out,
            &format!("GET changed feed, {FEED_ENTRIES} entries: 200"),
            dfull,
            (f2, f3),
            0.2,
        )?;
        self.floor_line(out, d)?;
        Ok(())
    }
}

/// Writes: the record path, then the same number of rows over HTTP,
/// alternated `write_rounds` times on fresh items; each is a second or
/// so, so one pair alone read anywhere from 0.53 to 0.91 on SQLite.
async fn writes(
    args: &HttpArgs,
    db: &Db,
    base: &str,
    auth: &str,
    posts: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let rows = args.batches * BATCH;
    let mut ratios = Vec::with_capacity(args.write_rounds);
    for round in 0..args.write_rounds {
        let first = 1_000_000 + round * 2 * rows;
        let record = record_pass(db, posts, first, rows).await?;
        let posted = post_pass(base, auth, posts, first + rows, args.batches).await?;
        let (record_rate, post_rate) = (rate(rows, record), rate(rows, posted));
        ratios.push(post_rate / record_rate);
        writeln!(
            out,
            "{:<52} {:>8.2} s {:>10.0} rows/s",
            format!("digestd record path, {rows} rows"),
            record.as_secs_f64(),
            record_rate
        )?;
        writeln!(
            out,
            "{:<52} {:>8.2} s {:>10.0} rows/s  {:.2}x the record path",
            format!(
                "POST /api/v1/modifications, {} x {BATCH} rows",
                args.batches
            ),
            posted.as_secs_f64(),
            post_rate,
            post_rate / record_rate
        )?;
    }
    ratios.sort_by(f64::total_cmp);
    writeln!(
        out,
        "POST against the record path, median of {} alternated rounds: {:.2}x (goal >= 0.7)",
        ratios.len(),
        ratios[ratios.len() / 2]
    )?;
    Ok(())
}

/// `rows` modifications of `collection` from item `first` through the
/// `digestd record` path, in one connection; its wall time.
async fn record_pass(db: &Db, collection: &str, first: usize, rows: usize) -> Result<Duration> {
    let record_lines = lines(collection, first, rows).join("\n");
    let db = db.clone();
    tokio::task::spawn_blocking(move || -> Result<Duration> {
        let mut c = db.conn()?;
        let started = Instant::now();
        let mods = ingest::parse_all(&mut c, record_lines.as_bytes(), &ingest::AtBounds::ANY)?;
        ingest::write_batched(&mut c, &mods, 10_000, &mut |_| {})?;
        Ok(started.elapsed())
    })
    .await
    .map_err(|e| Error::Storage(format!("bench: {e}")))?
}

/// `batches` POSTs of 1,000 modifications of `collection` from item
/// `first`, one after another on one connection; their wall time.
async fn post_pass(
    base: &str,
    auth: &str,
    collection: &str,
    first: usize,
    batches: usize,
) -> Result<Duration> {
    let client = reqwest::Client::new();
    let bodies: Vec<String> = (0..batches)
        .map(|b| {
            format!(
                "[{}]",
                lines(collection, first + b * BATCH, BATCH).join(",")
            )
        })
        .collect();
    let started = Instant::now();
    for body in bodies {
        let r = client
            .post(format!("{base}/api/v1/modifications"))
            .header("authorization", auth)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| Error::Storage(format!("bench: {e}")))?;
        if r.status() != 201 {
            return Err(Error::Storage(format!(
                "POST /api/v1/modifications answered {}: {}",
                r.status(),
                r.text().await.unwrap_or_default()
            )));
        }
    }
    Ok(started.elapsed())
}

/// `n` GETs of `url` over `conns` concurrent connections; every answer must
/// have status `want`. Returns the wall time.
async fn load(
    client: &reqwest::Client,
    n: usize,
    conns: usize,
    url: String,
    headers: Vec<(&'static str, String)>,
    want: u16,
) -> Result<Duration> {
    // Parsed once, as a load generator does: the client's own per-request
    // work (URL parsing, header validation) is not the server's, and it
    // weighs more on a long URL with a query than on `/healthz`.
    let parsed = reqwest::Url::parse(&url).map_err(|e| Error::Storage(format!("bench: {e}")))?;
    let mut map = reqwest::header::HeaderMap::new();
    for (h, v) in &headers {
        let v = reqwest::header::HeaderValue::from_str(v)
            .map_err(|e| Error::Storage(format!("bench: {e}")))?;
        map.insert(*h, v);
    }
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(conns);
    for k in 0..conns {
        let share = n / conns + usize::from(k < n % conns);
        let (client, url, parsed, map) = (client.clone(), url.clone(), parsed.clone(), map.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..share {
                let req = client.get(parsed.clone()).headers(map.clone());
                let r = req.send().await.map_err(|e| format!("{e}"))?;
                let status = r.status().as_u16();
                r.bytes().await.map_err(|e| format!("{e}"))?;
                if status != want {
                    return Err(format!("{url} answered {status}, not {want}"));
                }
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await
            .map_err(|e| Error::Storage(format!("bench: {e}")))?
            .map_err(|e| Error::Storage(format!("bench: {e}")))?;
    }
    Ok(started.elapsed())
}
