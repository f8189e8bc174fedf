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
use crate::digest::Composer;
use crate::error::Error;
use crate::ids::PartyId;
use crate::schedule::{self, Flushed};
use crate::{items, parties, subscriptions, validate};

use super::super::body::RawBody;
use super::super::{ApiError, App};
use super::view::{self, Choice, ContactView, SubView};
use super::{form, is_form, person, FormKey, Page, PageResult};

mod apply;
use apply::{apply, own_subscription};

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
        "cadence" => "Changed: the next digest comes at the new time and holds everything since the last one.",
        "flushed" => "Sent: the digest is on its way. The next one holds only what changes from now on.",
        "nothing" => "Nothing is waiting: nothing was sent.",
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
    let style = Style::page(tz, &user.locale);
    let names: HashMap<i64, String> = items::list_collections(c)?
        .into_iter()
        .map(|k| (k.id.0, k.name))
        .collect();
    let points = parties::contact_points(c, party)?;
    let usable: Vec<String> = points
        .iter()
        .filter(|p| !p.disabled)
        .map(|p| p.channel.clone())
        .collect();
    let prefs = (user.daily_hour, user.week_start.as_str());
    let subs = subscriptions::list_for_party(c, party)?
        .iter()
        .map(|s| SubView {
            cadence: Some(view::cadence(s, &style, prefs, &usable)),
            flushable: s.kind == "modification" && !s.paused,
            ..view::describe(s, &names, &style)
        })
        .collect();
    let groups = group_subs(c, party, &names, &style)?;
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
    /// Done, and a digest is queued: the queue is woken.
    Sent(String),
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
    let dcfg = app.cfg.digest.clone();
    let outcome = app
        .blocking(move |c| {
            let Some((party, key)) = person(c, &code)? else {
                return Ok(Outcome::NotFound);
            };
            if !key.verify(&code, f.get("csrf").map(String::as_str)) {
                return Ok(Outcome::Forbidden);
            }
            let done = match f.get("action").map(String::as_str) {
                Some("newlink") => {
                    crate::signup::send_new_link(c, &email, &base, party, now).map(|()| "newlink")
                }
                Some("flush") => flush(c, now, party, &f, (&dcfg, &email)),
                _ => apply(c, now, party, &f),
            };
            match done {
                Ok("newlink") => Ok(Outcome::NewLink),
                Ok("flushed") => Ok(Outcome::Sent(format!("{pre}/s/{code}?done=flushed"))),
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
        Outcome::Sent(to) => {
            app.db.wake_queue();
            Ok(Page::see_other(to))
        }
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

/// `flush` ("Send it now"): what is waiting for one of the person's own
/// subscriptions, posted as a digest ([`schedule::flush_in_tx`]); pressed
/// again with nothing new, it sends nothing. A group's subscription is not
/// the person's to send to the group (NotFound, like another's).
fn flush(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: PartyId,
    f: &HashMap<String, String>,
    (digest, email): (&crate::config::DigestConfig, &crate::config::EmailConfig),
) -> crate::Result<&'static str> {
    let id = own_subscription(c, party, f)?;
    let mut composer = Composer::new(digest, email)?;
    Ok(
        match c.write_tx(|c| schedule::flush_in_tx(c, id, now, &mut composer))? {
            Flushed::Sent { .. } => "flushed",
            Flushed::Nothing => "nothing",
        },
    )
}
