//! `digestd demo`: builds a small world ([`world`]), then runs a week of
//! hourly ticks through the daemon's own path — each tick composes and posts
//! the due digests, then one queue pass writes them to the outbox (email as
//! `.eml`, XMPP and SMS bodies as text files beside them, what the webhook
//! and Slack would be posted as `.http` files) — and prints a
//! summary: digests per subscription, per user and channel, and one digest.
//! Without --db it uses a fresh SQLite file, `data/demo.db`.
//!
//! The demo writes to a directory of its own, [`DEMO_OUTBOX`], never to the
//! configured `[email] dir`: its request ids start at 1000 like a real
//! database's, so its file names are the ones a real `queue run` writes,
//! and clearing "the previous demo's files" from the real outbox deleted
//! real mail. Its queue's sent journal is beside its database
//! (`data/demo.db.journal/`, never `[queue] journal_dir`), emptied by a
//! finished pass and removed when the demo ends.

pub mod world;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use chrono::{Duration, TimeZone, Utc};

use crate::config::Config;
use crate::db::{Db, DbUrl};
use crate::error::{Error, Result};
use crate::subscriptions;

const DEMO_DB: &str = "sqlite://data/demo.db";
/// Where every channel's messages go during the demo, beside its database.
pub const DEMO_OUTBOX: &str = "data/demo-outbox";

/// Runs the demo. `explicit_db`: the user named a database with --db.
pub fn run(
    cfg: &Config,
    explicit_db: bool,
    rt: &tokio::runtime::Handle,
    out: &mut dyn Write,
) -> Result<()> {
    let outbox = Path::new(DEMO_OUTBOX);
    if same_dir(outbox, Path::new(&cfg.email.dir)) {
        return Err(Error::invalid(format!(
            "demo: [email] dir is {DEMO_OUTBOX}, the demo's own outbox: point it elsewhere, or the demo would replace real messages"
        )));
    }
    let (run_cfg, url) = demo_config(cfg, explicit_db)?;
    // The journal's directory is made and checked before the database.
    let mut delivery = crate::deliver::queue::Delivery::new(&run_cfg.email, rt)?
        .with_journal_dir(&run_cfg.journal_dir())?;
    let db = Db::open(&url, 2)?;
    let mut c = db.conn()?;
    if !crate::parties::list_users(&mut c)?.is_empty() {
        return Err(Error::invalid("demo needs an empty database"));
    }
    let stale = clear_outbox(outbox)?;
    // A fixed week, so every run tells the same story.
    let start = Utc.with_ymd_and_hms(2026, 11, 16, 0, 0, 0).unwrap();
    // To Monday noon UTC, so every zone's Monday weekly digest is in.
    let end = start + Duration::days(7) + Duration::hours(12);
    world::build(&mut c, start)?;
    writeln!(
        out,
        "digestd demo: {url}, messages to {}/ (not [email] dir)",
        outbox.display()
    )?;
    writeln!(
        out,
        "5 users (New York, Berlin, Kolkata +5:30, Sydney, Santiago), groups planners ⊂ everyone,"
    )?;
    writeln!(
        out,
        "collections Team calendar and Wiki, {} modifications, {} subscriptions.\n",
        crate::modlog::count(&mut c)?,
        subscriptions::list(&mut c)?.len()
    )?;

    let owner = crate::schedule::lease::owner_name();
    let metrics = crate::metrics::Metrics::new();
    // The ticks `serve` would make: the instants of `[schedule] tick`.
    let ticks = crate::schedule::Ticks::Schedule(Box::new(run_cfg.schedule.cron()?))
        .instants(start, end + Duration::seconds(1))?;
    for &t in &ticks {
        crate::cycle::tick_and_deliver(&db, &run_cfg, &mut delivery, &owner, t, &metrics)?;
    }
    // Every outcome is in the database: the empty journal goes with the
    // Delivery, and the demo's own journal directory after it (emptied,
    // so `remove_dir` takes it; another database's is never touched).
    drop(delivery);
    if !explicit_db {
        let _ = std::fs::remove_dir(run_cfg.journal_dir());
    }
    writeln!(
        out,
        "A week of ticks ({} of them, [schedule] tick = {:?}), {} to {} UTC, each a real tick and queue pass:\n",
        ticks.len(),
        run_cfg.schedule.tick,
        start.format("%a %Y-%m-%d %H:%M"),
        end.format("%a %Y-%m-%d %H:%M")
    )?;
    per_subscription(&mut c, out)?;
    per_channel(&mut c, out)?;
    let files = list_outbox(outbox)?;
    written(out, outbox, &files, stale)?;
    sample(&files, out)?;
    Ok(())
}

/// The configuration the demo runs with, and its database's URL: the
/// named database or a fresh `data/demo.db` (its journal beside it), and
/// every channel's `dir` transport into the demo's own outbox.
fn demo_config(cfg: &Config, explicit_db: bool) -> Result<(Config, String)> {
    let mut run_cfg = cfg.clone();
    let url = if explicit_db {
        cfg.database.url.clone()
    } else {
        DbUrl::parse(DEMO_DB)?.remove_sqlite_files();
        // The demo's journal is its own, beside its database, like the
        // database's lock files; one a killed demo left goes with it.
        run_cfg.queue.journal_dir = String::new();
        let _ = std::fs::remove_dir_all(crate::config::journal_dir_for(DEMO_DB));
        DEMO_DB.to_string()
    };
    run_cfg.database.url = url.clone();
    // The demo sends nothing: every channel goes to the demo's outbox (the
    // push channels' `dir` transports write under `[email] dir` too).
    run_cfg.email.transport = crate::config::EmailTransport::Dir;
    run_cfg.email.dir = DEMO_OUTBOX.into();
    run_cfg.sms.transport = crate::config::SmsTransport::Dir;
    run_cfg.xmpp.transport = crate::config::XmppTransport::Dir;
    run_cfg.webhook.transport = crate::config::WebhookTransport::Dir;
    run_cfg.matrix.transport = crate::config::MatrixTransport::Dir;
    Ok((run_cfg, url))
}

/// What the demo wrote to its outbox, by channel, and that it sent
/// nothing.
fn written(
    out: &mut dyn Write,
    outbox: &Path,
    files: &[(&str, std::path::PathBuf)],
    stale: usize,
) -> Result<()> {
    writeln!(
        out,
        "\nWritten to {}/: {} .eml, {} in xmpp/, {} in sms/, {} in webhook/, {} in slack/, {} in matrix/{}.",
        outbox.display(),
        files.iter().filter(|f| f.0 == "email").count(),
        files.iter().filter(|f| f.0 == "xmpp").count(),
        files.iter().filter(|f| f.0 == "sms").count(),
        files.iter().filter(|f| f.0 == "webhook").count(),
        files.iter().filter(|f| f.0 == "slack").count(),
        files.iter().filter(|f| f.0 == "matrix").count(),
        if stale > 0 {
            format!(" ({stale} files from an earlier demo removed first)")
        } else {
            String::new()
        }
    )?;
    writeln!(
        out,
        "(The demo sends nothing: email goes to the dir transport, XMPP and SMS bodies are\n\
         written to xmpp/ and sms/ as they would be sent, the webhook's and Slack's\n\
         requests to webhook/ and slack/, and Matrix events to matrix/. Set [email]\n\
         transport = \"smtp\", [xmpp] transport = \"xmpp\", [sms] transport = \"http\",\n\
         [webhook] transport = \"http\" and [matrix] transport = \"matrix\" to deliver for real.)"
    )?;
    Ok(())
}

fn per_subscription(c: &mut crate::db::DbConn, out: &mut dyn Write) -> Result<()> {
    let names: BTreeMap<i64, String> = crate::parties::list_users(c)?
        .into_iter()
        .map(|u| (u.id.0, u.username))
        .collect();
    let colls: BTreeMap<i64, String> = crate::items::list_collections(c)?
        .into_iter()
        .map(|k| (k.id.0, k.name))
        .collect();
    let runs = crate::schedule::list_runs(c)?;
    writeln!(
        out,
        "  {:<9} {:<54} {:>4} {:>5} {:>5}  periods",
        "who", "subscription", "runs", "sent", "empty"
    )?;
    for s in subscriptions::list(c)? {
        let mine: Vec<_> = runs
            .iter()
            .filter(|r| r.subscription_id == s.id.0)
            .collect();
        let sent = mine.iter().filter(|r| r.request_id.is_some()).count();
        let who = match names.get(&s.party.0) {
            Some(n) => n.clone(),
            None => crate::parties::name_of(c, s.party)?,
        };
        let coll = s
            .collection
            .and_then(|k| colls.get(&k.0).cloned())
            .unwrap_or_else(|| "all".into());
        let what = format!("{} {} {}", s.frequency, s.kind, coll);
        let periods = match (mine.first(), mine.last()) {
            (Some(a), Some(b)) if mine.len() > 1 => format!("{} .. {}", a.period, b.period),
            (Some(a), _) => a.period.clone(),
            _ => "-".into(),
        };
        writeln!(
            out,
            "  {who:<9} {:<54} {:>4} {sent:>5} {:>5}  {periods}",
            format!("{what} → {}", s.channels.join(",")),
            mine.len(),
            mine.len() - sent
        )?;
    }
    writeln!(
        out,
        "  (empty: the run is recorded so the window chains, nothing is sent;\n   elena's calendar digest asks for empty ones too)"
    )?;
    Ok(())
}

fn per_channel(c: &mut crate::db::DbConn, out: &mut dyn Write) -> Result<()> {
    let got = crate::deliver::outbox::delivered(c)?;
    writeln!(
        out,
        "\n  digests delivered    email  xmpp   sms  webhook  slack  matrix"
    )?;
    let mut users: Vec<&String> = got.keys().map(|(u, _)| u).collect();
    users.dedup();
    for u in users {
        let n = |ch: &str| got.get(&(u.clone(), ch.to_string())).copied().unwrap_or(0);
        writeln!(
            out,
            "  {u:<18} {:>7} {:>5} {:>5} {:>8} {:>6} {:>7}",
            n("email"),
            n("xmpp"),
            n("sms"),
            n("webhook"),
            n("slack"),
            n("matrix")
        )?;
    }
    Ok(())
}

/// True when `a` and `b` name the same directory, whether or not it exists
/// yet (`outbox` and `./outbox/` are the same).
fn same_dir(a: &Path, b: &Path) -> bool {
    let norm = |p: &Path| {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        std::fs::canonicalize(&abs).unwrap_or_else(|_| abs.components().collect())
    };
    norm(a) == norm(b)
}

/// Demo outbox files by channel: `NNNNNNNN-party.eml|txt|http` where `party` is
/// one of the demo world's recipients, so nothing else found there is
/// ever listed or removed.
fn list_outbox(dir: &Path) -> Result<Vec<(&'static str, std::path::PathBuf)>> {
    let names = world::recipients();
    let mut out = Vec::new();
    for (ch, sub, ext) in [
        ("email", "", "eml"),
        ("xmpp", "xmpp", "txt"),
        ("sms", "sms", "txt"),
        ("webhook", "webhook", "http"),
        ("slack", "slack", "http"),
        ("matrix", "matrix", "txt"),
    ] {
        let d = dir.join(sub);
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let ours = name.len() > 9
                && name[..8].bytes().all(|b| b.is_ascii_digit())
                && name.as_bytes()[8] == b'-'
                && p.extension().and_then(|x| x.to_str()) == Some(ext)
                && p.file_stem()
                    .and_then(|s| s.to_str())
                    .is_some_and(|s| names.contains(&&s[9..]));
            if ours {
                out.push((ch, p));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Removes the files an earlier demo wrote to the demo's own outbox (only
/// names of its own shape and recipients).
fn clear_outbox(dir: &Path) -> Result<usize> {
    let files = list_outbox(dir)?;
    for (_, p) in &files {
        std::fs::remove_file(p)
            .map_err(|e| Error::Storage(format!("outbox {}: {e}", p.display())))?;
    }
    Ok(files.len())
}

/// Prints the text part of the richest email, one chat message, one SMS,
/// one Slack post and one Matrix message.
fn sample(files: &[(&str, std::path::PathBuf)], out: &mut dyn Write) -> Result<()> {
    let read = |p: &Path| std::fs::read(p).unwrap_or_default();
    let richest = files
        .iter()
        .filter(|f| f.0 == "email")
        .max_by_key(|f| read(&f.1).len());
    if let Some((_, p)) = richest {
        let raw = read(p);
        if let Some(m) = mail_parser::MessageParser::default().parse(&raw) {
            writeln!(
                out,
                "\nOne of them, {} (Subject: {}):\n",
                p.display(),
                m.subject().unwrap_or("")
            )?;
            let text = m.body_text(0).unwrap_or_default().replace("\r\n", "\n");
            for l in text.lines() {
                writeln!(out, "    {l}")?;
            }
        }
    }
    for (channel, what) in [
        ("xmpp", "An XMPP chat message"),
        ("sms", "An SMS"),
        ("slack", "A Slack post"),
        ("matrix", "A Matrix message"),
    ] {
        let Some((_, p)) = files.iter().find(|f| f.0 == channel) else {
            continue;
        };
        writeln!(out, "\n{what} (not sent), {}:\n", p.display())?;
        for l in String::from_utf8_lossy(&read(p)).lines() {
            writeln!(out, "    {l}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_demo_recipients_files_are_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("sms")).unwrap();
        for f in [
            "00001000-alice.eml",
            "00001000-asha.eml",
            "00001001-planners.eml",
            "notes.eml",
            "sms/00001002-elena.txt",
            "sms/00001002-elena.eml",
        ] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        let names: Vec<_> = list_outbox(d)
            .unwrap()
            .into_iter()
            .map(|(ch, p)| (ch, p.strip_prefix(d).unwrap().display().to_string()))
            .collect();
        assert_eq!(
            names,
            [
                ("email", "00001000-alice.eml".to_string()),
                ("email", "00001001-planners.eml".to_string()),
                ("sms", "sms/00001002-elena.txt".to_string()),
            ]
        );
        assert_eq!(clear_outbox(d).unwrap(), 3);
        assert!(d.join("00001000-asha.eml").exists());
    }

    #[test]
    fn the_same_directory_under_two_spellings() {
        assert!(same_dir(Path::new("outbox"), Path::new("./outbox/")));
        assert!(!same_dir(Path::new(DEMO_OUTBOX), Path::new("outbox")));
    }
}
