//! `bench import`: `user import` and `subscription import` of N people
//! through the real paths (JSON lines parsed, validated, written), beside
//! a raw load of the same rows in the same run: one prepared INSERT per
//! row on SQLite, multi-row INSERTs of 1,000 on PostgreSQL, one
//! transaction. Goal: ≥ 0.5 × the floor on each back end.

use std::io::Write;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use clap::Args;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::{open_empty, rate};
use crate::db::schema::{contact_points, parties, subscriptions, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::import;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// People to import (each with an email address and a daily digest).
    #[arg(long, default_value_t = 100_000)]
    pub users: usize,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-import.db";
const ZONES: [&str; 20] = [
    "Pacific/Auckland",
    "Australia/Sydney",
    "Asia/Tokyo",
    "Asia/Shanghai",
    "Asia/Kolkata",
    "Asia/Dubai",
    "Europe/Moscow",
    "Africa/Nairobi",
    "Europe/Berlin",
    "Europe/Paris",
    "Europe/London",
    "Atlantic/Azores",
    "America/Sao_Paulo",
    "America/Argentina/Buenos_Aires",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Anchorage",
    "Pacific/Honolulu",
];

fn name(i: usize) -> String {
    format!("bu{i}")
}

fn user_lines(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 90);
    for i in 0..n {
        writeln!(
            out,
            r#"{{"name":"{}","tz":"{}","email":"{}@example.org"}}"#,
            name(i),
            ZONES[i % ZONES.len()],
            name(i)
        )
        .expect("to memory");
    }
    out
}

fn sub_lines(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 100);
    for i in 0..n {
        writeln!(
            out,
            r#"{{"party":"{}","frequency":"daily","kind":"modification","all":true,"hour":9}}"#,
            name(i)
        )
        .expect("to memory");
    }
    out
}

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, 8, 0, 0).unwrap()
}

/// The floor for users: parties, users and contact points of the same
/// people, in one transaction.
fn raw_users(c: &mut DbConn, n: usize) -> Result<Duration> {
    let now = at().naive_utc();
    let names: Vec<String> = (0..n).map(name).collect();
    let emails: Vec<String> = names.iter().map(|n| format!("{n}@example.org")).collect();
    let codes: Vec<String> = (0..n).map(|i| format!("{i:064x}")).collect();
    let t = Instant::now();
    c.write_tx(|c| {
        let p: Vec<_> = names
            .iter()
            .map(|n| {
                (
                    parties::kind.eq("user"),
                    parties::name.eq(n.as_str()),
                    parties::created_at.eq(now),
                )
            })
            .collect();
        let ids: Vec<i64> = match c {
            DbConn::Sqlite(s) => p
                .iter()
                .map(|r| {
                    diesel::insert_into(parties::table)
                        .values(r)
                        .returning(parties::id)
                        .get_result(s)
                })
                .collect::<QueryResult<_>>()?,
            DbConn::Postgres(pg) => {
                let mut ids = Vec::with_capacity(n);
                for chunk in p.chunks(1000) {
                    ids.extend(
                        diesel::insert_into(parties::table)
                            .values(chunk)
                            .returning(parties::id)
                            .get_results::<i64>(pg)?,
                    );
                }
                ids
            }
        };
        let u: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                (
                    users::party_id.eq(*id),
                    users::timezone.eq(ZONES[i % ZONES.len()]),
                    users::week_start.eq(0),
                    users::daily_hour.eq(8),
                    users::locale.eq("en-US"),
                    users::subscriber_code.eq(codes[i].as_str()),
                )
            })
            .collect();
        let cp: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                (
                    contact_points::party_id.eq(*id),
                    contact_points::channel.eq("email"),
                    contact_points::address.eq(emails[i].as_str()),
                    contact_points::created_at.eq(now),
                )
            })
            .collect();
        match c {
            DbConn::Sqlite(s) => {
                for r in &u {
                    diesel::insert_into(users::table).values(r).execute(s)?;
                }
                for r in &cp {
                    diesel::insert_into(contact_points::table)
                        .values(r)
                        .execute(s)?;
                }
            }
            DbConn::Postgres(pg) => {
                for chunk in u.chunks(1000) {
                    diesel::insert_into(users::table)
                        .values(chunk)
                        .execute(pg)?;
                }
                for chunk in cp.chunks(1000) {
                    diesel::insert_into(contact_points::table)
                        .values(chunk)
                        .execute(pg)?;
                }
            }
        }
        Ok(())
    })?;
    Ok(t.elapsed())
}

/// The floor for subscriptions: the same rows, one transaction.
fn raw_subs(c: &mut DbConn) -> Result<Duration> {
    let now = at().naive_utc();
    let ids: Vec<i64> = parties::table
        .filter(parties::name.like("bu%"))
        .select(parties::id)
        .order(parties::id)
        .load(c)?;
    let t = Instant::now();
    c.write_tx(|c| {
        let rows: Vec<_> = ids
            .iter()
            .map(|id| {
                (
                    subscriptions::party_id.eq(*id),
                    subscriptions::collection_id.eq(None::<i64>),
                    subscriptions::kind.eq("modification"),
                    subscriptions::frequency.eq("daily"),
                    subscriptions::day_of_week.eq(None::<i32>),
                    subscriptions::hour_of_day.eq(Some(9)),
                    subscriptions::channels.eq("email"),
                    subscriptions::include_own.eq(false),
                    subscriptions::send_empty.eq(false),
                    subscriptions::created_at.eq(now),
                    subscriptions::active_since.eq(now),
                    subscriptions::next_due_at.eq(Some(now)),
                )
            })
            .collect();
        match c {
            DbConn::Sqlite(s) => {
                for r in &rows {
                    diesel::insert_into(subscriptions::table)
                        .values(r)
                        .returning(subscriptions::id)
                        .get_result::<i64>(s)?;
                }
            }
            DbConn::Postgres(pg) => {
                for chunk in rows.chunks(1000) {
                    diesel::insert_into(subscriptions::table)
                        .values(chunk)
                        .returning(subscriptions::id)
                        .get_results::<i64>(pg)?;
                }
            }
        }
        Ok(())
    })?;
    Ok(t.elapsed())
}

fn clear_subs(c: &mut DbConn) -> Result<()> {
    c.batch_execute("DELETE FROM subscriptions")?;
    Ok(())
}

fn clear_users(c: &mut DbConn) -> Result<()> {
    c.batch_execute(
        "DELETE FROM subscriptions; \
         DELETE FROM contact_points WHERE party_id IN (SELECT id FROM parties WHERE name LIKE 'bu%'); \
         DELETE FROM users WHERE party_id IN (SELECT id FROM parties WHERE name LIKE 'bu%'); \
         DELETE FROM parties WHERE name LIKE 'bu%'",
    )?;
    Ok(())
}

pub fn import(args: &ImportArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    if args.users == 0 {
        return Err(Error::invalid("--users must be at least 1"));
    }
    let n = args.users;
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    let ulines = user_lines(n);
    let slines = sub_lines(n);
    writeln!(
        out,
        "bench import: {n} users over {} zones, each with an email address and a daily digest",
        ZONES.len()
    )?;
    let line = |out: &mut dyn Write, what: &str, d: Duration| -> Result<()> {
        writeln!(
            out,
            "{what:<58} {:>7.2} s {:>9.0} rows/s",
            d.as_secs_f64(),
            rate(n, d)
        )?;
        Ok(())
    };

    // Floors before and after the import; the fastest is the floor.
    let mut floor_u = Duration::MAX;
    let mut floor_s = Duration::MAX;
    for _ in 0..2 {
        let d = raw_users(&mut c, n)?;
        line(out, "floor: users, raw rows", d)?;
        floor_u = floor_u.min(d);
        let d = raw_subs(&mut c)?;
        line(out, "floor: subscriptions, raw rows", d)?;
        floor_s = floor_s.min(d);
        clear_users(&mut c)?;
    }

    let t = Instant::now();
    let checked = import::users::check(&mut c, &ulines[..])?;
    let done = import::users::write(&mut c, at(), &checked, &mut |_| {})?;
    let du = t.elapsed();
    if done.created != n {
        return Err(Error::Storage(format!(
            "imported {} of {n} users",
            done.created
        )));
    }
    line(out, "user import (parse, validate, write)", du)?;
    let t = Instant::now();
    let ids = import::subs::import(&mut c, at(), &slines[..], false, &mut |_| {})?;
    let ds = t.elapsed();
    if ids.len() != n {
        return Err(Error::Storage(format!(
            "imported {} of {n} subscriptions",
            ids.len()
        )));
    }
    line(
        out,
        "subscription import (parse, validate, schedule, write)",
        ds,
    )?;
    clear_subs(&mut c)?;
    clear_users(&mut c)?;
    let d = raw_users(&mut c, n)?;
    line(out, "floor: users, raw rows", d)?;
    floor_u = floor_u.min(d);
    let d = raw_subs(&mut c)?;
    line(out, "floor: subscriptions, raw rows", d)?;
    floor_s = floor_s.min(d);
    clear_users(&mut c)?;

    let ru = floor_u.as_secs_f64() / du.as_secs_f64();
    let rs = floor_s.as_secs_f64() / ds.as_secs_f64();
    writeln!(out, "user import: {ru:.2}x the floor (goal >= 0.5)")?;
    writeln!(out, "subscription import: {rs:.2}x the floor (goal >= 0.5)")?;
    Ok(())
}
