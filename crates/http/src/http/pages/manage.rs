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
//! one line in the person's language (a field's own check too: a zone, a
//! locale tag, quiet hours, a Matrix ID) and 400, having written nothing.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use chrono::{DateTime, Utc};

use crate::db::DbConn;
use crate::digest::words::Style;
use crate::digest::Composer;
use crate::error::Error;
use crate::i18n::{Arg, Locale};
use crate::ids::PartyId;
use crate::schedule::{self, Flushed};
use crate::{items, parties, subscriptions, validate};

use super::super::body::RawBody;
use super::super::{ApiError, App};
use super::view::{self, Choice, ContactView, SubView};
use super::{form, is_form, person, refusal_line, Asked, FormKey, Page, PageResult, Words};

mod apply;
use apply::{apply, own_subscription};

#[derive(Template)]
#[template(path = "pages/manage.html")]
pub struct ManagePage {
    pub t: Words,
    /// This page's path (the forms post here).
    pub path: String,
    /// The path of the unsubscribe pages, `…/unsubscribe/`.
    pub unsubscribe: String,
    pub csrf: String,
    /// "Your digests, asha".
    pub heading: String,
    /// The zone and clock times are shown in.
    pub times: String,
    pub daily_hour: String,
    pub week_start: &'static str,
    pub locale: String,
    /// HH:MM-HH:MM, or empty; and the digests sent inside them.
    pub quiet_hours: String,
    pub quiet_notes: Vec<String>,
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
    pub notice: Option<String>,
}

/// The catalogue key of what a change said, shown after the 303 (a fixed
/// text: nothing of the request is reflected).
fn notice(done: &str) -> Option<&'static str> {
    Some(match done {
        "pause" => "done-pause",
        "resume" => "done-resume",
        "hour" => "done-hour",
        "cadence" => "done-cadence",
        "flushed" => "done-flushed",
        "nothing" => "done-nothing",
        "end" => "done-end",
        "prefs" => "done-prefs",
        "stop" => "done-stop",
        "optout" => "done-optout",
        "optin" => "done-optin",
        "matrix" => "done-matrix",
        "unmatrix" => "done-unmatrix",
        _ => return None,
    })
}

/// The page of `party`, in their language (or the one `asked` names),
/// zone and clock.
pub fn load(
    c: &mut DbConn,
    now: DateTime<Utc>,
    app_prefix: &str,
    (party, code, key): (PartyId, &str, &FormKey),
    asked: &Asked,
) -> crate::Result<ManagePage> {
    let user = parties::get_user(c, party)?;
    let tz = validate::timezone(&user.timezone).unwrap_or(chrono_tz::UTC);
    let t = Words::new(asked.person(&user.locale));
    let style = Style {
        lang: t.lang,
        ..Style::new(tz, &user.locale)
    };
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
            cadence: Some(view::cadence(&t, s, &style, prefs, &usable)),
            flushable: s.kind == "modification" && !s.paused,
            ..view::describe(&t, s, &names, &style)
        })
        .collect();
    let groups = group_subs(c, &t, party, &names, &style)?;
    let matrix = points
        .iter()
        .find(|p| p.channel == parties::Channel::Matrix.as_str())
        .map(|p| view::mask(&p.channel, &p.address));
    let contacts = points.iter().map(|cp| view::contact(&t, cp)).collect();
    let quiet_notes = super::quiet::notes(c, &t, party, &user.quiet_hours, &names, &style)?;
    let path = format!("{app_prefix}/s/{code}");
    let times = t.f(
        if style.hour12 {
            "manage-times-hour12"
        } else {
            "manage-times-hour24"
        },
        &[
            ("zone", Arg::Str(&user.timezone)),
            ("abbr", Arg::Str(&style.zone(now))),
        ],
    );
    Ok(ManagePage {
        unsubscribe: format!("{path}/unsubscribe/"),
        path,
        csrf: key.token(code),
        heading: t.f1("manage-heading", "name", &user.username),
        times,
        daily_hour: view::hour_label(&style, user.daily_hour),
        week_start: t.day(validate::weekday(&user.week_start).unwrap_or(0) as i32),
        hours: view::hour_choices(&style, user.daily_hour),
        days: view::day_choices(&t, &user.week_start),
        zones: view::zone_choices(&user.timezone),
        subs,
        groups,
        contacts,
        matrix,
        locale: user.locale,
        quiet_hours: user.quiet_hours,
        quiet_notes,
        error: None,
        notice: None,
        t,
    })
}

/// The group subscriptions that reach `party` through its groups (nested
/// too), described for them, each saying whether they opted out of it.
pub(crate) fn group_subs(
    c: &mut DbConn,
    t: &Words,
    party: PartyId,
    names: &HashMap<i64, String>,
    style: &Style,
) -> crate::Result<Vec<SubView>> {
    let out = subscriptions::opted_out(c, party)?;
    let mut views = Vec::new();
    for s in subscriptions::reaching(c, party)? {
        let group = parties::name_of(c, s.party)?;
        views.push(view::describe_group(
            t,
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
    asked: Asked,
) -> PageResult {
    let now = app.clock.now();
    let pre = prefix(&app);
    let lang = asked.visitor();
    let page = app
        .blocking(move |c| match person(c, &code)? {
            Some((party, key)) => load(c, now, &pre, (party, &code, &key), &asked).map(Some),
            None => Ok(None),
        })
        .await
        .map_err(Page::failed(lang))?;
    let mut page = page.ok_or_else(|| Page::not_found(lang))?;
    page.notice = q
        .as_deref()
        .and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "done")
                .map(|(_, v)| v.into_owned())
        })
        .as_deref()
        .and_then(notice)
        .map(|k| page.t.t(k).into_owned());
    Ok(Page::ok(page.render().map_err(render_failed)?))
}

pub(crate) fn render_failed(e: askama::Error) -> Page {
    tracing::error!(error = %e, "page did not render");
    Page::from(ApiError::internal())
}

/// What a POST came to.
enum Outcome {
    NotFound,
    Forbidden(Locale),
    Done(String),
    Refused(Box<ManagePage>),
    NewLink(Locale),
    /// Done, and a digest is queued: the queue is woken.
    Sent(String),
}

pub async fn act(
    State(app): State<App>,
    Path(code): Path<String>,
    headers: HeaderMap,
    asked: Asked,
    body: Result<RawBody, ApiError>,
) -> PageResult {
    let lang = asked.visitor();
    let body = body.map_err(Page::failed(lang))?;
    if !is_form(&headers) {
        return Err(Page::not_a_form(lang));
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
            let lang = asked.person(&parties::get_user(c, party)?.locale);
            if !key.verify(&code, f.get("csrf").map(String::as_str)) {
                return Ok(Outcome::Forbidden(lang));
            }
            let done = match f.get("action").map(String::as_str) {
                Some("newlink") => {
                    crate::signup::send_new_link(c, &email, &base, party, now).map(|()| "newlink")
                }
                Some("flush") => flush(c, now, party, &f, (&dcfg, &email)),
                _ => apply(c, now, party, &f, lang),
            };
            match done {
                Ok("newlink") => Ok(Outcome::NewLink(lang)),
                Ok("flushed") => Ok(Outcome::Sent(format!("{pre}/s/{code}?done=flushed"))),
                Ok(done) => Ok(Outcome::Done(format!("{pre}/s/{code}?done={done}"))),
                Err(Error::NotFound(_)) => Ok(Outcome::NotFound),
                Err(e) if e.is_bad_input() => {
                    let mut page = load(c, now, &pre, (party, &code, &key), &asked)?;
                    page.error = Some(refusal_line(&e, lang));
                    Ok(Outcome::Refused(Box::new(page)))
                }
                Err(e) => Err(e),
            }
        })
        .await
        .map_err(Page::failed(lang))?;
    match outcome {
        Outcome::NotFound => Err(Page::not_found(lang)),
        Outcome::Forbidden(l) => Err(Page::forbidden(l)),
        Outcome::Done(to) => Ok(Page::see_other(to)),
        Outcome::Sent(to) => {
            app.db.wake_queue();
            Ok(Page::see_other(to))
        }
        Outcome::NewLink(l) => {
            // Mailed now, not at the next queue pass.
            app.db.wake_queue();
            Ok(Page::say(
                StatusCode::OK,
                l,
                "new-link-title",
                "new-link-sent",
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
