//! `user`, `group` and `contact`: people, groups and their addresses.

use std::io::Write;

use clap::{Args, Subcommand};

use super::{progress, Ctx};
use crate::error::Result;
use crate::{import, parties};

/// The preferences `user set`, `group add` and `group set` take.
#[derive(Args, Debug)]
pub struct Prefs {
    /// IANA timezone digests are scheduled in, e.g. Europe/Paris.
    #[arg(long)]
    tz: Option<String>,
    /// First day of the week for weekly digests: mon..sun.
    #[arg(long)]
    week_start: Option<String>,
    /// Local hour (0-23) that new daily and weekly subscriptions default to.
    #[arg(long, allow_negative_numbers = true)]
    daily_hour: Option<i64>,
    /// e.g. en-US (12-hour clock), en-GB or de-DE (24-hour).
    #[arg(long)]
    locale: Option<String>,
    /// Quiet hours in the zone, HH:MM-HH:MM (e.g. 22:00-07:00; '' clears):
    /// notifications and hourly digests wait until they end.
    #[arg(long)]
    quiet: Option<String>,
}

impl Prefs {
    fn changes(self) -> parties::UserChanges {
        parties::UserChanges {
            timezone: self.tz,
            week_start: self.week_start,
            daily_hour: self.daily_hour,
            locale: self.locale,
            quiet_hours: self.quiet,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum UserCmd {
    /// Add a user: says what was stored, then the new id as the last line (for scripts).
    Add {
        name: String,
        /// IANA timezone, e.g. Europe/Paris.
        #[arg(long)]
        tz: String,
        /// Email address (RFC 5321), e.g. ana@example.org.
        #[arg(long)]
        email: Option<String>,
        /// XMPP address (a bare JID), e.g. ana@chat.example.org.
        #[arg(long)]
        xmpp: Option<String>,
        /// E.164, e.g. +14155550123.
        #[arg(long)]
        phone: Option<String>,
        /// Matrix user ID (@ana:example.org) or room ID.
        #[arg(long)]
        matrix: Option<String>,
        /// mon..sun (default mon).
        #[arg(long)]
        week_start: Option<String>,
        /// 0-23 (default 8).
        #[arg(long, allow_negative_numbers = true)]
        daily_hour: Option<i64>,
        /// e.g. en-US (default).
        #[arg(long)]
        locale: Option<String>,
        /// Quiet hours, HH:MM-HH:MM in the zone (default none).
        #[arg(long)]
        quiet: Option<String>,
    },
    /// List users.
    List {
        /// A JSON array of users.
        #[arg(long)]
        json: bool,
    },
    /// Change a user's preferences (their subscriptions are rescheduled).
    #[command(group(clap::ArgGroup::new("change").required(true).multiple(true)
        .args(["tz", "week_start", "daily_hour", "locale", "quiet"])))]
    Set {
        name: String,
        #[command(flatten)]
        prefs: Prefs,
    },
    /// Delete a user: their subscriptions end, unsent messages to them are
    /// cancelled, they leave every group, their addresses go (one transaction).
    Delete { name: String },
    /// Rename a user (id, subscriptions and history stay).
    Rename { old: String, new: String },
    /// Give a user a new subscriber code: their manage and unsubscribe
    /// links change; old unsubscribe links still stop digests by RFC 8058
    /// one-click, and open nothing else. Prints the new manage link.
    RotateCode { name: String },
    /// Create or update many users from JSON lines on stdin:
    /// {"name", "tz", "email", "xmpp", "phone", "week_start", "daily_hour",
    /// "locale", "quiet_hours"} (name and tz required). Any bad line: nothing is written.
    Import,
}

#[derive(Subcommand, Debug)]
pub enum GroupCmd {
    /// Add a group: says what was stored, then the new id as the last line (for scripts).
    Add {
        name: String,
        /// The group's own address (used when a request is not expanded).
        #[arg(long)]
        email: Option<String>,
        /// Its preferences (defaults: UTC, mon, 8, en-GB).
        #[command(flatten)]
        prefs: Prefs,
    },
    /// List groups with their preferences.
    List {
        /// A JSON array of groups.
        #[arg(long)]
        json: bool,
    },
    /// Show one group's preferences, address and number of members.
    Show {
        name: String,
        /// A JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Change a group's preferences (its subscriptions are rescheduled).
    #[command(group(clap::ArgGroup::new("change").required(true).multiple(true)
        .args(["tz", "week_start", "daily_hour", "locale", "quiet"])))]
    Set {
        name: String,
        #[command(flatten)]
        prefs: Prefs,
    },
    /// Put a user or group into a group.
    AddMember { group: String, member: String },
    /// Add members from JSON lines on stdin: {"group", "member"} (a missing
    /// group is created). Any bad line or cycle: nothing is written.
    Import,
    /// Take a user or group out of a group.
    RemoveMember { group: String, member: String },
    /// The users in a group, recursively.
    Expand {
        name: String,
        /// A JSON array of the users it expands to.
        #[arg(long)]
        json: bool,
    },
    /// Delete a group: its memberships and subscriptions end, unsent
    /// messages to it are cancelled (one transaction); its members stay.
    Delete { name: String },
    /// Rename a group.
    Rename { old: String, new: String },
}

pub fn user(cmd: UserCmd, ctx: &mut Ctx) -> Result<()> {
    let mut conn = ctx.conn()?;
    match cmd {
        UserCmd::Import => {
            let checked = import::users::check(&mut conn, std::io::stdin().lock())?;
            let bar = progress(checked.len());
            let done = import::users::write(&mut conn, ctx.now(), &checked, &mut |n| {
                bar.set_position(n as u64)
            })?;
            bar.finish_and_clear();
            writeln!(
                ctx.out,
                "imported {} users: {} created, {} updated",
                done.created + done.updated,
                done.created,
                done.updated
            )?;
        }
        UserCmd::Add {
            name,
            tz,
            email,
            xmpp,
            phone,
            matrix,
            week_start,
            daily_hour,
            locale,
            quiet,
        } => {
            let id = parties::create_user(
                &mut conn,
                ctx.now(),
                &parties::NewUser {
                    name,
                    timezone: tz,
                    email,
                    xmpp,
                    phone,
                    matrix,
                    week_start,
                    daily_hour,
                    locale,
                    quiet_hours: quiet,
                },
            )?;
            let users = parties::list_users(&mut conn)?;
            if let Some(u) = users.iter().find(|u| u.id == id) {
                let addrs = addresses(u);
                writeln!(
                    ctx.out,
                    "added user {}: {}, week starts {}, daily {:02}:00{}, {}",
                    u.username,
                    u.timezone,
                    u.week_start,
                    u.daily_hour,
                    quiet_part(&u.quiet_hours),
                    if addrs.is_empty() {
                        "no addresses"
                    } else {
                        &addrs
                    }
                )?;
            }
            // The id stays the last line, for scripts.
            writeln!(ctx.out, "{id}")?;
        }
        UserCmd::List { json } => {
            let users = parties::list_users(&mut conn)?;
            print_users(ctx.out, &users, json)?;
        }
        UserCmd::Set { name, prefs } => {
            crate::manage::update_user(&mut conn, &name, &prefs.changes())?;
            writeln!(ctx.out, "updated {name}")?;
        }
        UserCmd::Delete { name } => {
            let r = crate::remove::user(&mut conn, ctx.now(), &name)?;
            writeln!(ctx.out, "deleted user {name}: {}", r.summary())?;
        }
        UserCmd::Rename { old, new } => {
            parties::rename(&mut conn, "user", &old, &new)?;
            writeln!(ctx.out, "renamed user {old} to {new}")?;
        }
        UserCmd::RotateCode { name } => {
            let code = parties::rotate_code_of(&mut conn, ctx.now(), &name)?;
            writeln!(
                ctx.out,
                "new subscriber code for {name}; their page is now:"
            )?;
            writeln!(
                ctx.out,
                "{}",
                parties::manage_url(&ctx.cfg.digest.base_url, &code)
            )?;
        }
    }
    Ok(())
}

pub fn group(cmd: GroupCmd, ctx: &mut Ctx) -> Result<()> {
    let mut conn = ctx.conn()?;
    match cmd {
        GroupCmd::Add { name, email, prefs } => {
            let id = parties::create_group_with(
                &mut conn,
                ctx.now(),
                &parties::NewGroup {
                    name: name.clone(),
                    email,
                    prefs: prefs.changes(),
                },
            )?;
            let g = parties::get_group(&mut conn, &name)?;
            writeln!(ctx.out, "added group {}", group_summary(&g))?;
            // The id stays the last line, for scripts.
            writeln!(ctx.out, "{id}")?;
        }
        GroupCmd::List { json } => {
            let groups = parties::list_groups(&mut conn)?;
            if json {
                let json = serde_json::to_string(&groups).expect("serialisable");
                writeln!(ctx.out, "{json}")?;
            }
            for g in groups.iter().filter(|_| !json) {
                writeln!(ctx.out, "{}", group_line(g))?;
            }
        }
        GroupCmd::Show { name, json } => {
            let g = parties::get_group(&mut conn, &name)?;
            if json {
                let json = serde_json::to_string(&g).expect("serialisable");
                writeln!(ctx.out, "{json}")?;
            } else {
                writeln!(ctx.out, "{}", group_line(&g))?;
            }
        }
        GroupCmd::Set { name, prefs } => {
            crate::manage::update_group(&mut conn, &name, &prefs.changes())?;
            let g = parties::get_group(&mut conn, &name)?;
            writeln!(ctx.out, "updated group {}", group_summary(&g))?;
        }
        GroupCmd::AddMember { group, member } => {
            parties::add_member(&mut conn, &group, &member)?;
            writeln!(ctx.out, "{member} is in {group}")?;
        }
        GroupCmd::Import => {
            let bar = progress(0);
            let n =
                import::groups::import(&mut conn, ctx.now(), std::io::stdin().lock(), &mut |n| {
                    bar.set_position(n as u64)
                })?;
            bar.finish_and_clear();
            writeln!(ctx.out, "imported {n} memberships")?;
        }
        GroupCmd::Expand { name, json } => {
            let (id, _) = parties::find(&mut conn, &name)?;
            let users = parties::expand(&mut conn, id)?;
            print_users(ctx.out, &users, json)?;
        }
        GroupCmd::RemoveMember { group, member } => {
            parties::remove_member(&mut conn, &group, &member)?;
            writeln!(ctx.out, "{member} is no longer in {group}")?;
        }
        GroupCmd::Delete { name } => {
            let r = crate::remove::group(&mut conn, ctx.now(), &name)?;
            writeln!(ctx.out, "deleted group {name}: {}", r.summary())?;
        }
        GroupCmd::Rename { old, new } => {
            parties::rename(&mut conn, "group", &old, &new)?;
            writeln!(ctx.out, "renamed group {old} to {new}")?;
        }
    }
    Ok(())
}

fn print_users(out: &mut dyn Write, users: &[parties::User], json: bool) -> Result<()> {
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(users).expect("serialisable")
        )?;
        return Ok(());
    }
    for u in users {
        writeln!(out, "{}", user_line(u))?;
    }
    Ok(())
}

/// `ana  Europe/Madrid  week starts mon daily 08:00, quiet 22:00-07:00  ana@example.org`.
fn user_line(u: &parties::User) -> String {
    format!(
        "{:<16} {:<24} week starts {} daily {:02}:00{}  {}",
        u.username,
        u.timezone,
        u.week_start,
        u.daily_hour,
        quiet_part(&u.quiet_hours),
        addresses(u)
    )
}

/// `, quiet 22:00-07:00`, or nothing when there are none.
fn quiet_part(q: &str) -> String {
    if q.is_empty() {
        String::new()
    } else {
        format!(", quiet {q}")
    }
}

fn addresses(u: &parties::User) -> String {
    [&u.email, &u.xmpp, &u.phone]
        .iter()
        .filter_map(|a| a.as_deref())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `team: Asia/Tokyo, week starts sun, daily 09:00, en-GB, email team@example.com`.
fn group_summary(g: &parties::Group) -> String {
    let email = g
        .email
        .as_deref()
        .map_or(String::new(), |e| format!(", email {e}"));
    format!(
        "{}: {}, week starts {}, daily {:02}:00{}, {}{email}",
        g.name,
        g.timezone,
        g.week_start,
        g.daily_hour,
        quiet_part(&g.quiet_hours),
        g.locale
    )
}

/// `team  Asia/Tokyo  week starts sun daily 09:00  en-GB  3 members  team@example.com`.
fn group_line(g: &parties::Group) -> String {
    format!(
        "{:<16} {:<24} week starts {} daily {:02}:00{}  {}  {} member{}  {}",
        g.name,
        g.timezone,
        g.week_start,
        g.daily_hour,
        quiet_part(&g.quiet_hours),
        g.locale,
        g.members,
        if g.members == 1 { "" } else { "s" },
        g.email.as_deref().unwrap_or("")
    )
    .trim_end()
    .to_string()
}
