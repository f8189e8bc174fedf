//! `GET /s/{code}`: a person's subscriptions, preferences and contact
//! points; `POST /s/{code}` with `action` = `pause`, `resume`, `hour` (one
//! subscription's new local hour), `end` (with `confirm=yes`), `prefs`,
//! `optout` / `optin` (a group subscription that reaches the person as a
//! member: "stop sending me this" and its undo), `matrix` / `unmatrix`
//! (the person's Matrix ID set, through `parties::change_contact` as
//! `contact --set` does, or removed), `stop` or `newlink`
//! ("send me a new link": a new subscriber code mailed to the person,
//! `signup::send_new_link`; this page's link stops working, so the answer
//! is a page that says so rather than a 303), and the form token. A change
//! goes
//! through the CLI's library call (`manage::change_subscription`,
//! `manage::update_user`, `remove::subscription`, `remove::unsubscribe`)
//! and answers 303 back to the page; bad input shows the page again with
//! one line and 400, having written nothing.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use chrono::{DateTime, Utc};

use crate::db::DbConn;
use crate::digest::words::Style;
use crate::error::Error;
use crate::ids::{PartyId, SubscriptionId};
use crate::parties::{self, ContactChange, UserChanges};
use crate::subscriptions::{self, Retime};
use crate::{items, manage, remove, validate};

use super::super::body::RawBody;
use super::super::{ApiError, App};
use super::view::{self, Choice, ContactView, SubView};
use super::{form, is_form, person, FormKey, Page, PageResult};

#[derive(Template)]
#[template(path = "pages/manage.html")]
pub struct ManagePage {
    /// This page's path (the forms post here).
    pub path: String,
    /// The path of the unsubscribe pages, `…/unsubscribe/`.
    pub unsubscribe: String,
    pub csrf: String,
    pub name: String,
    pub timezone: String,
    pub zone_abbr: String,
    pub daily_hour: String,
    pub week_start: &'static str,
    pub locale: String,
    /// HH:MM-HH:MM, or empty; and the digests sent inside them.
    pub quiet_hours: String,
    pub quiet_notes: Vec<String>,
    pub clock: &'static str,
    pub subs: Vec<SubView>,
    /// The group subscriptions that reach the person as a member.
    pub groups: Vec<SubView>,
    pub contacts: Vec<ContactView>,
    /// The Matrix contact point, masked, when there is one.
    pub matrix: Option<String>,
    pub hours: Vec<Choice>,
    pub days: Vec<Choice>,
    pub zones: Vec<Choice>,
    pub error: Option<String>,
    pub notice: Option<&'static str>,
}

/// What a change said, shown after the 303 (a fixed text: nothing of the
/// request is reflected).
fn notice(done: &str) -> Option<&'static str> {
    Some(match done {
        "pause" => "Paused. It sends nothing until you resume it.",
        "resume" => "Resumed: the next digest comes at its next time, without what happened while it was paused.",
        "hour" => "Changed: the next digest comes at the new time.",
        "end" => "Ended for good.",
        "prefs" => "Saved. Your digests follow the new settings from their next time.",
        "stop" => "Everything is stopped: every subscription is paused, no group's digest is sent to you, and nothing queued will be sent.",
        "optout" => "Stopped for you: the group keeps its digest and its other members still get it. Undo it here whenever you like.",
        "optin" => "Back on: the group's digests reach you again from their next time.",
        "matrix" => "Saved: digests by Matrix go to the new ID from their next time.",
        "unmatrix" => "Removed: nothing more is sent to you by Matrix.",
        _ => return None,
    })
}

/// The page of `party`, in their zone and clock.
pub fn load(
    c: &mut DbConn,
    now: DateTime<Utc>,
    app_prefix: &str,
    party: PartyId,
    code: &str,
    key: &FormKey,
) -> crate::Result<ManagePage> {
    let user = parties::get_user(c, party)?;
    let tz = validate::timezone(&user.timezone).unwrap_or(chrono_tz::UTC);
    let style = Style::new(tz, &user.locale);
    let names: HashMap<i64, String> = items::list_collections(c)?
        .into_iter()
        .map(|k| (k.id.0, k.name))
        .collect();
    let subs = subscriptions::list_for_party(c, party)?
        .iter()
        .map(|s| view::describe(s, &names, &style))
        .collect();
    let groups = group_subs(c, party, &names, &style)?;
    let points = parties::contact_points(c, party)?;
    let matrix = points
        .iter()
        .find(|p| p.channel == parties::Channel::Matrix.as_str())
        .map(|p| view::mask(&p.channel, &p.address));
    let contacts = points.iter().map(view::contact).collect();
    let quiet_notes = super::quiet::notes(c, party, &user.quiet_hours, &names, &style)?;
    let path = format!("{app_prefix}/s/{code}");
    Ok(ManagePage {
        unsubscribe: format!("{path}/unsubscribe/"),
        path,
        csrf: key.token(code),
        zone_abbr: style.zone(now),
        daily_hour: view::hour_label(&style, user.daily_hour),
        week_start: view::day_name(validate::weekday(&user.week_start).unwrap_or(0) as i32),
        clock: if style.hour12 { "12-hour" } else { "24-hour" },
        hours: view::hour_choices(&style, user.daily_hour),
        days: view::day_choices(&user.week_start),
        zones: view::zone_choices(&user.timezone),
        subs,
        groups,
        contacts,
        matrix,
        name: user.username,
        timezone: user.timezone,
        locale: user.locale,
        quiet_hours: user.quiet_hours,
        quiet_notes,
        error: None,
        notice: None,
    })
}

/// The group subscriptions that reach `party` through its groups (nested
/// too), described for them, each saying whether they opted out of it.
pub fn group_subs(
    c: &mut DbConn,
    party: PartyId,
    names: &HashMap<i64, String>,
    style: &Style,
) -> crate::Result<Vec<SubView>> {
    let out = subscriptions::opted_out(c, party)?;
    let mut views = Vec::new();
    for s in subscriptions::reaching(c, party)? {
        let group = parties::name_of(c, s.party)?;
        views.push(view::describe_group(
            &s,
            group,
            out.contains(&s.id),
            names,
            style,
        ));
    }
    Ok(views)
}

/// The path prefix of `[digest] base_url` (pages behind a proxy at `/digest`).
pub fn prefix(app: &App) -> String {
    url::Url::parse(&app.cfg.digest.base_url)
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default()
}

pub async fn show(
    State(app): State<App>,
    Path(code): Path<String>,
    RawQuery(q): RawQuery,
) -> PageResult {
    let now = app.clock.now();
    let pre = prefix(&app);
    let page = app
        .blocking(move |c| match person(c, &code)? {
            Some((party, key)) => load(c, now, &pre, party, &code, &key).map(Some),
            None => Ok(None),
        })
        .await?;
    let mut page = page.ok_or_else(Page::not_found)?;
    page.notice = q
        .as_deref()
        .and_then(|q| q.strip_prefix("done="))
        .and_then(notice);
    Ok(Page::ok(page.render().map_err(render_failed)?))
}

pub fn render_failed(e: askama::Error) -> Page {
    tracing::error!(error = %e, "page did not render");
    Page::from(ApiError::internal())
}

/// What a POST came to.
enum Outcome {
    NotFound,
    Forbidden,
    Done(String),
    Refused(Box<ManagePage>),
    NewLink,
}

pub async fn act(
    State(app): State<App>,
    Path(code): Path<String>,
    headers: HeaderMap,
    body: Result<RawBody, ApiError>,
) -> PageResult {
    let body = body?;
    if !is_form(&headers) {
        return Err(Page::not_a_form());
    }
    let f = form(&body.0);
    let now = app.clock.now();
    let pre = prefix(&app);
    let (email, base) = (app.cfg.email.clone(), app.cfg.digest.base_url.clone());
    let outcome = app
        .blocking(move |c| {
            let Some((party, key)) = person(c, &code)? else {
                return Ok(Outcome::NotFound);
            };
            if !key.verify(&code, f.get("csrf").map(String::as_str)) {
                return Ok(Outcome::Forbidden);
            }
            let done = if f.get("action").map(String::as_str) == Some("newlink") {
                crate::signup::send_new_link(c, &email, &base, party, now).map(|()| "newlink")
            } else {
                apply(c, now, party, &f)
            };
            match done {
                Ok("newlink") => Ok(Outcome::NewLink),
                Ok(done) => Ok(Outcome::Done(format!("{pre}/s/{code}?done={done}"))),
                Err(Error::NotFound(_)) => Ok(Outcome::NotFound),
                Err(e) if e.is_bad_input() => {
                    let mut page = load(c, now, &pre, party, &code, &key)?;
                    page.error = Some(validate::escape_for_line(&e.to_string()));
                    Ok(Outcome::Refused(Box::new(page)))
                }
                Err(e) => Err(e),
            }
        })
        .await?;
    match outcome {
        Outcome::NotFound => Err(Page::not_found()),
        Outcome::Forbidden => Err(Page::forbidden()),
        Outcome::Done(to) => Ok(Page::see_other(to)),
        Outcome::NewLink => {
            // Mailed now, not at the next queue pass.
            app.db.wake_queue();
            Ok(Page::message(
                StatusCode::OK,
                "A new link is on its way",
                "We sent a new link to your email address. The link you used to come here no longer opens this page; unsubscribe links in digests you received still work.",
            ))
        }
        Outcome::Refused(page) => Err(Page::with(
            StatusCode::BAD_REQUEST,
            page.render().map_err(render_failed)?,
        )),
    }
}

/// The subscription a form names (`subscription`); none, or not a
/// number, is NotFound (the bad-link page).
fn subscription_field(f: &HashMap<String, String>) -> crate::Result<SubscriptionId> {
    f.get("subscription")
        .and_then(|s| s.parse::<i64>().ok())
        .map(SubscriptionId)
        .ok_or_else(|| Error::not_found("no such subscription"))
}

/// One of `party`'s subscriptions, named by a form field; another
/// person's, or none, is NotFound (the bad-link page).
fn own_subscription(
    c: &mut DbConn,
    party: PartyId,
    f: &HashMap<String, String>,
) -> crate::Result<SubscriptionId> {
    let id = subscription_field(f)?;
    if subscriptions::ids_of_party(c, party)?.contains(&id) {
        Ok(id)
    } else {
        Err(Error::not_found("no such subscription"))
    }
}

/// A group subscription that reaches `party`, named by a form field; any
/// other, or none, is NotFound (the bad-link page).
fn reaching_subscription(
    c: &mut DbConn,
    party: PartyId,
    f: &HashMap<String, String>,
) -> crate::Result<SubscriptionId> {
    let id = subscription_field(f)?;
    if subscriptions::reaching(c, party)?
        .iter()
        .any(|s| s.id == id)
    {
        Ok(id)
    } else {
        Err(Error::not_found("no such subscription"))
    }
}

/// Does what the form asked; returns the action done.
fn apply(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: PartyId,
    f: &HashMap<String, String>,
) -> crate::Result<&'static str> {
    let field = |k: &str| f.get(k).map(String::as_str);
    match field("action").unwrap_or("") {
        "pause" => {
            let id = own_subscription(c, party, f)?;
            manage::change_subscription(c, now, id, Some(true), &Retime::default())?;
            Ok("pause")
        }
        "resume" => {
            let id = own_subscription(c, party, f)?;
            manage::change_subscription(c, now, id, Some(false), &Retime::default())?;
            Ok("resume")
        }
        "hour" => {
            let id = own_subscription(c, party, f)?;
            let h = field("hour").unwrap_or("");
            let hour = h
                .trim()
                .parse::<i64>()
                .map_err(|_| Error::invalid(format!("invalid hour {h:?}: use 0-23")))?;
            let retime = Retime {
                hour: Some(hour),
                ..Retime::default()
            };
            manage::change_subscription(c, now, id, None, &retime)?;
            Ok("hour")
        }
        "end" => {
            let id = own_subscription(c, party, f)?;
            if field("confirm") != Some("yes") {
                return Err(Error::invalid(
                    "tick the box to confirm that this subscription ends for good",
                ));
            }
            remove::subscription(c, now, id)?;
            Ok("end")
        }
        "prefs" => {
            let daily_hour = match field("daily_hour") {
                Some(h) => Some(
                    h.trim()
                        .parse::<i64>()
                        .map_err(|_| Error::invalid(format!("invalid hour {h:?}: use 0-23")))?,
                ),
                None => None,
            };
            let ch = UserChanges {
                timezone: field("timezone").map(str::to_string),
                week_start: field("week_start").map(str::to_string),
                daily_hour,
                locale: field("locale").map(|l| l.trim().to_string()),
                quiet_hours: field("quiet_hours").map(str::to_string),
            };
            let name = parties::name_of(c, party)?;
            manage::update_user(c, &name, &ch)?;
            Ok("prefs")
        }
        "optout" => {
            let id = reaching_subscription(c, party, f)?;
            c.write_tx(|c| remove::opt_out_in_tx(c, now, party, &[id], remove::Via::Page))?;
            Ok("optout")
        }
        "optin" => {
            let id = reaching_subscription(c, party, f)?;
            c.write_tx(|c| subscriptions::opt_in_in_tx(c, id, party))?;
            Ok("optin")
        }
        "matrix" | "unmatrix" => matrix(c, now, party, field("action"), field("matrix")),
        "stop" => {
            let ids = subscriptions::ids_of_party(c, party)?;
            let groups: Vec<SubscriptionId> = subscriptions::reaching(c, party)?
                .iter()
                .map(|s| s.id)
                .collect();
            c.write_tx(|c| {
                remove::unsubscribe_in_tx(c, now, &ids, remove::Via::Page)?;
                remove::opt_out_in_tx(c, now, party, &groups, remove::Via::Page)
            })?;
            Ok("stop")
        }
        other => Err(Error::invalid(format!("unknown action {other:?}"))),
    }
}

/// `matrix`: the person's Matrix ID set to the form's `matrix` (spaces
/// around it dropped; validated as `contact --set` validates it: enabled,
/// not verified, a new direct room at the next delivery; the same ID
/// again changes nothing); `unmatrix`: it is removed. Webhook and preset URLs have no such form: the operator
/// sets them.
fn matrix(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: PartyId,
    action: Option<&str>,
    id: Option<&str>,
) -> crate::Result<&'static str> {
    let name = parties::name_of(c, party)?;
    let ch = parties::Channel::Matrix;
    if action == Some("unmatrix") {
        return match parties::remove_contact(c, &name, ch) {
            Err(Error::NotFound(_)) => Err(Error::invalid("you have no Matrix ID to remove")),
            other => other.map(|_| "unmatrix"),
        };
    }
    let id = ch.validate_address(id.unwrap_or("").trim_matches(' '))?;
    // The same ID again keeps its state and its room, as a user PUT does.
    let same = parties::contact_points(c, party)?
        .iter()
        .any(|p| p.channel == ch.as_str() && p.address == id);
    if !same {
        parties::change_contact(c, now, &name, ch, &ContactChange::Set(id))?;
    }
    Ok("matrix")
}
