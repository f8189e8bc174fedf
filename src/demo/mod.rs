//! `digestd demo`: builds a small world (users in five timezones, nested
//! groups, two collections, items, a week of modifications, subscriptions)
//! through the real library calls, then prints what the database holds.
//! Without --db it uses a fresh SQLite file, `data/demo.db`.

use std::io::Write;

use chrono::{Duration, TimeZone, Utc};

use crate::config::Config;
use crate::db::{Db, DbUrl};
use crate::error::{Error, Result};
use crate::items::{self, ItemInput};
use crate::modlog::{self, Action, Change, NewModification};
use crate::parties::{self, NewUser};
use crate::subscriptions::{self, SubscribeRequest};

const DEMO_DB: &str = "sqlite://data/demo.db";

const PEOPLE: [(&str, &str, &str, u8); 5] = [
    ("alice", "America/New_York", "en-US", 8),
    ("bruno", "Europe/Berlin", "de-DE", 7),
    ("chitra", "Asia/Kolkata", "en-IN", 9),
    ("dai", "Australia/Sydney", "en-AU", 8),
    ("elena", "America/Santiago", "es-CL", 8),
];

/// Runs the demo. `explicit_db`: the user named a database with --db.
pub fn run(cfg: &Config, explicit_db: bool, out: &mut dyn Write) -> Result<()> {
    let url = if explicit_db {
        cfg.database.url.clone()
    } else {
        DbUrl::parse(DEMO_DB)?.remove_sqlite_files();
        DEMO_DB.to_string()
    };
    let db = Db::open(&url, 2)?;
    let mut c = db.conn()?;
    if !parties::list_users(&mut c)?.is_empty() {
        return Err(Error::invalid("demo needs an empty database"));
    }
    // A fixed week, so every run tells the same story.
    let start = Utc.with_ymd_and_hms(2026, 11, 16, 0, 0, 0).unwrap();

    for (name, tz, locale, hour) in PEOPLE {
        parties::create_user(
            &mut c,
            start,
            &NewUser {
                name: name.into(),
                timezone: tz.into(),
                email: Some(format!("{name}@example.com")),
                xmpp: Some(format!("{name}@localhost")),
                phone: None,
                week_start: Some(
                    if tz.starts_with("America") {
                        "sun"
                    } else {
                        "mon"
                    }
                    .into(),
                ),
                daily_hour: Some(i64::from(hour)),
                locale: Some(locale.into()),
            },
        )?;
    }
    parties::create_group(&mut c, start, "planners", Some("planners@example.com"))?;
    parties::create_group(&mut c, start, "everyone", None)?;
    for m in ["alice", "bruno"] {
        parties::add_member(&mut c, "planners", m)?;
    }
    for m in ["planners", "chitra", "dai", "elena"] {
        parties::add_member(&mut c, "everyone", m)?;
    }
    let calendar = items::create_collection(&mut c, start, "Team calendar", None)?;
    let wiki = items::create_collection(&mut c, start, "Wiki", None)?;

    // Items through the diffing path: created, then edited.
    let standup = uuid::Uuid::new_v4().to_string();
    let mut put = ItemInput {
        uuid: standup.clone(),
        collection: Some(calendar.uuid.clone()),
        kind: "event".into(),
        title: "Weekly planning".into(),
        start: Some("2026-11-23T15:00:00Z".into()),
        rrule: Some("FREQ=WEEKLY;BYDAY=MO".into()),
        tz: Some("America/New_York".into()),
        actor: "alice".into(),
        at: Some("2026-11-16T14:05:00Z".into()),
        ..Default::default()
    };
    items::put_item(&mut c, start, &put)?;
    put.start = Some("2026-11-23T16:00:00Z".into());
    put.actor = "bruno".into();
    put.at = Some("2026-11-17T09:30:00Z".into());
    items::put_item(&mut c, start, &put)?;

    // A week of wiki edits, as another system would report them.
    let actors = parties::ids_by_name(&mut c, &["alice", "bruno", "chitra", "dai", "elena"])?;
    let pages = [
        "Onboarding",
        "Release checklist",
        "On-call rota",
        "Style guide",
    ];
    let mut mods = Vec::new();
    for h in (0..7 * 24).step_by(5) {
        let who = PEOPLE[h % PEOPLE.len()].0;
        let page = pages[h % pages.len()];
        mods.push(NewModification {
            tx_id: format!("demo:{h}"),
            occurred_at: start + Duration::hours(h as i64) + Duration::minutes(17),
            collection: wiki.id,
            item_uuid: uuid::Uuid::from_u128(h as u128 % 4 + 1).to_string(),
            actor: actors.get(who).copied(),
            action: Action::Edited,
            item_kind: "page".into(),
            item_title: page.into(),
            changes: vec![Change {
                attribute: "body".into(),
                old: Some(format!("revision {h}")),
                new: Some(format!("revision {}", h + 5)),
            }],
        });
    }
    modlog::record(&mut c, &mods)?;

    for (party, freq, kind, coll) in [
        ("alice", "daily", "modification", Some(&wiki.uuid)),
        ("bruno", "weekly", "modification", None),
        ("chitra", "daily", "forward", Some(&calendar.uuid)),
        ("dai", "hourly", "modification", Some(&calendar.uuid)),
        ("everyone", "weekly", "forward", Some(&calendar.uuid)),
    ] {
        subscriptions::subscribe(
            &mut c,
            start,
            &SubscribeRequest {
                party: party.into(),
                frequency: freq.into(),
                kind: kind.into(),
                collection: coll.cloned(),
                channels: vec!["email".into()],
                ..Default::default()
            },
        )?;
    }

    writeln!(out, "digestd demo: {url}\n")?;
    writeln!(out, "users")?;
    for u in parties::list_users(&mut c)? {
        writeln!(
            out,
            "  {:<8} {:<20} {:<6} week starts {} daily {:02}:00  {}",
            u.username,
            u.timezone,
            u.locale,
            u.week_start,
            u.daily_hour,
            u.email.unwrap_or_default()
        )?;
    }
    let (everyone, _) = parties::find(&mut c, "everyone")?;
    let names: Vec<String> = parties::expand(&mut c, everyone)?
        .into_iter()
        .map(|u| u.username)
        .collect();
    writeln!(
        out,
        "\ngroup everyone (contains planners) expands to: {}",
        names.join(", ")
    )?;
    writeln!(out, "\ncollections")?;
    for coll in items::list_collections(&mut c)? {
        let n = modlog::find_in_window(&mut c, Some(&[coll.id]), start, start + Duration::days(8))?
            .len();
        writeln!(
            out,
            "  {}  {:<14} {n} modifications this week",
            coll.uuid, coll.name
        )?;
    }
    let edits = modlog::find_in_window(
        &mut c,
        Some(&[calendar.id]),
        start,
        start + Duration::days(8),
    )?;
    for m in edits.iter().filter(|m| m.action == "edited") {
        for ch in &m.changes {
            writeln!(
                out,
                "    {} {}: {} {} -> {}",
                m.occurred_at.format("%a %H:%M UTC"),
                m.item_title,
                ch.attribute,
                ch.old.as_deref().unwrap_or("-"),
                ch.new.as_deref().unwrap_or("-")
            )?;
        }
    }
    writeln!(out, "\nsubscriptions")?;
    for s in subscriptions::list(&mut c)? {
        writeln!(out, "  {s}")?;
    }
    writeln!(
        out,
        "\n{} modifications in the log.",
        modlog::count(&mut c)?
    )?;

    // A week of hourly ticks through the real scheduler, as a what-if.
    let runs = c.rolled_back(|c| {
        let mut all = Vec::new();
        for h in 0..7 * 24 {
            all.extend(crate::schedule::tick(
                c,
                start + Duration::hours(h),
                &mut crate::schedule::tick::Discard,
            )?);
        }
        Ok(all)
    })?;
    writeln!(
        out,
        "\na week of hourly ticks from {} (simulated, nothing kept): {} digests due",
        start.format("%Y-%m-%d"),
        runs.len()
    )?;
    let mut per: std::collections::BTreeMap<(String, String), (usize, String, String)> =
        Default::default();
    for r in &runs {
        let e = per
            .entry((
                r.party_name.clone(),
                format!("{} {}", r.frequency.as_str(), r.kind.as_str()),
            ))
            .or_insert((0, r.period.key.clone(), String::new()));
        e.0 += 1;
        e.2 = r.period.key.clone();
    }
    for ((party, what), (n, first, last)) in per {
        writeln!(
            out,
            "  {party:<9} {what:<22} {n:>4} digests, periods {first} .. {last}"
        )?;
    }
    writeln!(
        out,
        "\nComposing and delivering the digests is the next step (see the issues)."
    )?;
    Ok(())
}
