//! The demo's world, built through the real library calls: five people in
//! five zones (one at UTC+5:30, one whose DST changes at midnight), nested
//! groups, a team calendar of one-off and recurring events, a wiki, a week
//! of realistic changes to both, and subscriptions on every channel
//! (chitra's calendar digest also to a webhook, bruno's also to Slack,
//! dai's also to Matrix).

use chrono::{DateTime, Duration, Utc};

use crate::db::DbConn;
use crate::error::Result;
use crate::items::{self, Collection, ItemInput};
use crate::modlog::{self, Action, Change, NewModification};
use crate::parties::{self, NewUser};
use crate::subscriptions::SubscribeRequest;

/// (name, zone, locale, daily hour, phone).
pub const PEOPLE: [(&str, &str, &str, u8, Option<&str>); 5] = [
    (
        "alice",
        "America/New_York",
        "en-US",
        8,
        Some("+12125550123"),
    ),
    ("bruno", "Europe/Berlin", "de-DE", 7, None),
    ("chitra", "Asia/Kolkata", "en-IN", 9, None),
    ("dai", "Australia/Sydney", "en-AU", 8, None),
    (
        "elena",
        "America/Santiago",
        "es-CL",
        8,
        Some("+56221234567"),
    ),
];

/// (name, the group's own email address).
pub const GROUPS: [(&str, Option<&str>); 2] = [
    ("planners", Some("planners@example.com")),
    ("everyone", None),
];

/// Every party a demo message can be addressed to, which the demo's
/// outbox file names end with.
pub fn recipients() -> Vec<&'static str> {
    PEOPLE
        .iter()
        .map(|p| p.0)
        .chain(GROUPS.iter().map(|g| g.0))
        .collect()
}

pub struct World {
    pub calendar: Collection,
    pub wiki: Collection,
}

fn at(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// Builds the world; `start` is when the subscriptions begin.
pub fn build(c: &mut DbConn, start: DateTime<Utc>) -> Result<World> {
    let before = start - Duration::days(2);
    for (name, tz, locale, hour, phone) in PEOPLE {
        parties::create_user(
            c,
            before,
            &NewUser {
                name: name.into(),
                timezone: tz.into(),
                email: Some(format!("{name}@example.com")),
                xmpp: Some(format!("{name}@localhost")),
                phone: phone.map(String::from),
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
                ..Default::default()
            },
        )?;
    }
    // Receivers that exist only on paper: the demo writes what would be
    // posted and posts nothing.
    parties::set_webhook(
        c,
        before,
        "chitra",
        "https://hooks.example.com/digestd/chitra",
        None,
        crate::validate::UrlPolicy::default(),
    )?;
    parties::set_preset(
        c,
        before,
        "bruno",
        parties::Channel::Slack,
        "https://hooks.slack.com/services/T000/B000/demo",
        crate::validate::UrlPolicy::default(),
    )?;
    parties::change_contact(
        c,
        before,
        "dai",
        parties::Channel::Matrix,
        &parties::ContactChange::Set("@dai:example.org".into()),
    )?;
    for (name, email) in GROUPS {
        parties::create_group(c, before, name, email)?;
    }
    for m in ["alice", "bruno"] {
        parties::add_member(c, "planners", m)?;
    }
    for m in ["planners", "chitra", "dai", "elena"] {
        parties::add_member(c, "everyone", m)?;
    }
    let calendar = items::create_collection(c, before, "Team calendar", None)?;
    let wiki = items::create_collection(c, before, "Wiki", None)?;
    calendar_week(c, &calendar)?;
    wiki_week(c, &wiki, start)?;
    subscribe_all(c, start, &calendar, &wiki)?;
    Ok(World { calendar, wiki })
}

/// The calendar: events that already existed, then a week of changes made
/// through `item put`'s diffing path.
fn calendar_week(c: &mut DbConn, cal: &Collection) -> Result<()> {
    let events = Events(cal);
    let mut puts: Vec<ItemInput> = Vec::new();
    let existing = events.before_the_week(&mut puts);
    events.the_week(&mut puts, existing);
    for p in &puts {
        items::put_item(
            c,
            crate::validate::instant("at", p.at.as_deref().unwrap_or_default())?,
            p,
        )?;
    }
    Ok(())
}

/// The calendar's events, as `item put` takes them.
struct Events<'a>(&'a Collection);

/// The events from before the week that the week changes.
struct Existing {
    pipe: ItemInput,
    party: ItemInput,
    budget: ItemInput,
}

impl Events<'_> {
    /// Event `n` of the calendar, put by `actor` at `when`.
    fn event(&self, n: u128, title: &str, start: &str, actor: &str, when: &str) -> ItemInput {
        ItemInput {
            uuid: uuid::Uuid::from_u128(0xca1e_0000 + n).to_string(),
            collection: Some(self.0.uuid.clone()),
            kind: "event".into(),
            title: title.into(),
            start: at(start),
            actor: actor.into(),
            at: at(when),
            ..Default::default()
        }
    }

    /// Before the week: two series and three one-off events.
    fn before_the_week(&self, puts: &mut Vec<ItemInput>) -> Existing {
        let event = |n, title, start, actor, when| self.event(n, title, start, actor, when);
        puts.push(ItemInput {
            rrule: at("FREQ=WEEKLY;BYDAY=MO"),
            tz: at("America/New_York"),
            ..event(
                1,
                "Weekly planning",
                "2026-11-09T15:00:00Z",
                "alice",
                "2026-11-09T12:00:00Z",
            )
        });
        puts.push(ItemInput {
            rrule: at("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR"),
            tz: at("Europe/Berlin"),
            ..event(
                2,
                "Daily stand-up",
                "2026-11-16T08:30:00Z",
                "bruno",
                "2026-11-14T10:00:00Z",
            )
        });
        let pipe = event(
            3,
            "Janitor's Pipe Dream",
            "2026-11-19T23:00:00Z",
            "dai",
            "2026-11-14T11:00:00Z",
        );
        puts.push(pipe.clone());
        let party = event(
            4,
            "Release party",
            "2026-11-20T16:00:00Z",
            "bruno",
            "2026-11-14T12:00:00Z",
        );
        puts.push(party.clone());
        let budget = event(
            5,
            "Budget sync",
            "2026-11-18T15:00:00Z",
            "elena",
            "2026-11-14T13:00:00Z",
        );
        puts.push(budget.clone());
        Existing {
            pipe,
            party,
            budget,
        }
    }

    /// The week's changes, in the order they were made.
    fn the_week(&self, puts: &mut Vec<ItemInput>, existing: Existing) {
        let event = |n, title, start, actor, when| self.event(n, title, start, actor, when);
        let Existing {
            pipe,
            party,
            budget,
        } = existing;
        puts.push(event(
            6,
            "Diwali follow-up",
            "2026-11-18T04:30:00Z",
            "chitra",
            "2026-11-16T05:10:00Z",
        ));
        // The Cosmo example: the start moves from 3 PM to 4 PM Pacific.
        puts.push(ItemInput {
            start: at("2026-11-20T00:00:00Z"),
            at: at("2026-11-17T09:12:00Z"),
            ..pipe
        });
        // Created and deleted within the hour: no daily digest mentions it.
        let lunch = event(
            7,
            "Offsite lunch",
            "2026-11-19T17:00:00Z",
            "elena",
            "2026-11-17T14:05:00Z",
        );
        puts.push(lunch.clone());
        puts.push(ItemInput {
            deleted: true,
            at: at("2026-11-17T14:40:00Z"),
            ..lunch
        });
        // Moved and moved back the same morning: an undone edit.
        puts.push(ItemInput {
            start: at("2026-11-18T16:00:00Z"),
            at: at("2026-11-17T13:00:00Z"),
            ..budget.clone()
        });
        puts.push(ItemInput {
            start: at("2026-11-18T15:00:00Z"),
            actor: "alice".into(),
            at: at("2026-11-17T13:20:00Z"),
            ..budget
        });
        let review = ItemInput {
            reminder: at("2026-11-23T14:00:00Z"),
            ..event(
                8,
                "Quarterly review",
                "2026-11-24T14:00:00Z",
                "chitra",
                "2026-11-18T06:45:00Z",
            )
        };
        puts.push(review.clone());
        puts.push(ItemInput {
            title: "Quarterly review (Q4 numbers & plan)".into(),
            actor: "alice".into(),
            at: at("2026-11-19T15:30:00Z"),
            ..review
        });
        puts.push(ItemInput {
            deleted: true,
            at: at("2026-11-19T18:00:00Z"),
            ..party
        });
        puts.push(event(
            9,
            "Planning retro",
            "2026-11-27T15:00:00Z",
            "alice",
            "2026-11-21T16:00:00Z",
        ));
    }
}

/// The wiki's week, reported as another system would report it.
fn wiki_week(c: &mut DbConn, wiki: &Collection, start: DateTime<Utc>) -> Result<()> {
    let who = parties::ids_by_name(c, &["alice", "bruno", "chitra", "dai", "elena"])?;
    let pages = [
        "Onboarding",
        "Release checklist",
        "On-call rota",
        "Q&A: <b>fonts</b> & \"quotes\"",
    ];
    let mut mods = Vec::new();
    let mut rev = [3u32, 12, 7, 1];
    for h in (3..7 * 24).step_by(7) {
        let p = h % pages.len();
        let person = PEOPLE[(h / 3) % PEOPLE.len()].0;
        let old = rev[p];
        rev[p] += 1;
        mods.push(NewModification {
            tx_id: format!("wiki:{h}"),
            occurred_at: start + Duration::hours(h as i64) + Duration::minutes(17),
            collection: wiki.id,
            item_uuid: uuid::Uuid::from_u128(0x3141_0000 + p as u128).to_string(),
            actor: who.get(person).copied(),
            action: Action::Edited,
            item_kind: "page".into(),
            item_title: pages[p].into(),
            item_url: None,
            changes: vec![Change {
                attribute: "revision".into(),
                old: Some(old.to_string()),
                new: Some(rev[p].to_string()),
            }],
        });
    }
    mods.push(NewModification {
        tx_id: "wiki:new".into(),
        occurred_at: start + Duration::hours(50),
        collection: wiki.id,
        item_uuid: uuid::Uuid::from_u128(0x3141_0010).to_string(),
        actor: who.get("dai").copied(),
        action: Action::Created,
        item_kind: "page".into(),
        item_title: "Sydney office Wi-Fi".into(),
        item_url: None,
        changes: vec![Change {
            attribute: "title".into(),
            old: None,
            new: Some("Sydney office Wi-Fi".into()),
        }],
    });
    mods.push(NewModification {
        tx_id: "wiki:gone".into(),
        occurred_at: start + Duration::hours(101),
        collection: wiki.id,
        item_uuid: uuid::Uuid::from_u128(0x3141_0011).to_string(),
        actor: who.get("bruno").copied(),
        action: Action::Deleted,
        item_kind: "page".into(),
        item_title: "Old VPN setup".into(),
        item_url: None,
        changes: Vec::new(),
    });
    modlog::record(c, &mods)?;
    Ok(())
}

/// (who, frequency, kind, collection, channels, include_own, send_empty)
type Sub<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a Option<String>,
    &'a [&'a str],
    bool,
    bool,
);

/// Every subscription of the demo, on the calendar `cal` or the wiki
/// `wiki` (or every collection, `None`).
fn demo_subs<'a>(cal: &'a Option<String>, wiki: &'a Option<String>) -> [Sub<'a>; 10] {
    [
        (
            "alice",
            "daily",
            "modification",
            wiki,
            &["email", "sms"],
            false,
            false,
        ),
        ("alice", "weekly", "forward", cal, &["email"], false, false),
        (
            "bruno",
            "weekly",
            "modification",
            &None,
            &["email", "xmpp"],
            false,
            false,
        ),
        (
            "bruno",
            "daily",
            "forward",
            cal,
            &["xmpp", "slack"],
            false,
            false,
        ),
        (
            "chitra",
            "daily",
            "forward",
            cal,
            &["email", "webhook"],
            false,
            false,
        ),
        (
            "chitra",
            "daily",
            "modification",
            &None,
            &["email"],
            true,
            false,
        ),
        (
            "dai",
            "hourly",
            "modification",
            cal,
            &["email", "xmpp", "matrix"],
            false,
            false,
        ),
        (
            "elena",
            "daily",
            "modification",
            cal,
            &["email", "sms"],
            false,
            true,
        ),
        (
            "everyone",
            "weekly",
            "forward",
            cal,
            &["email"],
            false,
            false,
        ),
        (
            "planners",
            "daily",
            "modification",
            wiki,
            &["email"],
            false,
            false,
        ),
    ]
}

/// Subscribes everyone as [`demo_subs`] says, from `start`.
fn subscribe_all(
    c: &mut DbConn,
    start: DateTime<Utc>,
    cal: &Collection,
    wiki: &Collection,
) -> Result<()> {
    let (cal, wiki) = (Some(cal.uuid.clone()), Some(wiki.uuid.clone()));
    let subs = demo_subs(&cal, &wiki);
    for (party, freq, kind, coll, channels, include_own, send_empty) in subs {
        crate::manage::subscribe(
            c,
            start,
            &SubscribeRequest {
                party: party.into(),
                frequency: freq.into(),
                kind: kind.into(),
                collection: coll.clone(),
                channels: channels.iter().map(|s| s.to_string()).collect(),
                include_own,
                send_empty,
                ..Default::default()
            },
        )?;
    }
    Ok(())
}
