//! `/s/{code}/unsubscribe/{ids}` (`ids`: one subscription id, or several
//! joined by commas — the one link of a batched email). `GET` shows what
//! will stop and one button, and writes nothing: mail scanners and link
//! previews fetch every link. `POST` with the form token stops them
//! (`remove::unsubscribe`: paused, unsent digests cancelled, the rows
//! kept) and shows an undo button; `POST …/undo` resumes them
//! (`manage::resume`, from now, no burst).
//!
//! RFC 8058: a `POST` whose body is exactly `List-Unsubscribe=One-Click`
//! (form-urlencoded or multipart) stops them with no cookie and no token,
//! answers 200, and again 200 with nothing more written. The code is the
//! capability: every id must be one of the code owner's subscriptions, or
//! the answer is the bad-link 404, so a link cannot be edited into one
//! that stops someone else's digests.
//!
//! A group's digest carries each member's own link, with the group's
//! subscription id: an id may also be a group subscription that reaches
//! the code's owner through their groups (nested too). Stopping it opts
//! that member out (`remove::opt_out_in_tx`): the group keeps it, the
//! other members keep getting it; undo clears the opt-out.
//!
//! A code the person has since replaced (`parties::rotate_code`) still
//! works in the link of mail sent before, for unsubscribing only: the
//! one-click POST stops the link's subscriptions; the GET shows one button
//! that sends exactly that POST, and nothing of what it stops or whose;
//! the form POST, the undo and the manage page are the bad-link 404.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use chrono::{DateTime, Utc};

use crate::db::DbConn;
use crate::digest::words::Style;
use crate::ids::{PartyId, SubscriptionId};
use crate::{items, manage, parties, remove, subscriptions, validate};

use super::super::body::RawBody;
use super::super::{ApiError, App};
use super::manage::{group_subs, prefix, render_failed};
use super::view::{self, SubView};
use super::{content_type, form, is_form, person, Asked, FormKey, Page, PageResult, Words};
use crate::i18n::Locale;

/// At most this many ids in one link (a batch holds a handful).
const MAX_IDS: usize = 50;

#[derive(Template)]
#[template(path = "pages/unsubscribe.html")]
pub struct UnsubscribePage {
    pub t: Words,
    /// "confirm" (GET), "done" (after the POST), "undone" (after undo),
    /// "retired" (GET of a replaced code's link: one one-click button).
    pub state: &'static str,
    pub path: String,
    pub manage: String,
    pub csrf: String,
    pub subs: Vec<SubView>,
}

/// The ids of a link, without repeats; `None` for anything malformed.
fn parse_ids(s: &str) -> Option<Vec<SubscriptionId>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        if part.is_empty() || part.len() > 18 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let id = SubscriptionId(part.parse().ok().filter(|i: &i64| *i > 0)?);
        if !out.contains(&id) {
            out.push(id);
        }
    }
    (!out.is_empty() && out.len() <= MAX_IDS).then_some(out)
}

/// A link resolved: the code's owner, the form key, and the link's
/// subscriptions, split into the owner's own and the group subscriptions
/// that reach them as a member.
struct Resolved {
    party: PartyId,
    /// The language of the owner's pages: their locale's, or `?lang=`'s.
    lang: Locale,
    key: FormKey,
    /// The link's code was replaced: one-click only.
    retired: bool,
    own: Vec<SubscriptionId>,
    groups: Vec<SubscriptionId>,
}

/// The link resolved, when the code names someone and every id is one of
/// theirs or a group subscription that reaches them (through nested
/// groups too); anything else names nothing.
fn resolve(
    c: &mut DbConn,
    code: &str,
    ids: &str,
    asked: &Asked,
) -> crate::Result<Option<Resolved>> {
    let Some(ids) = parse_ids(ids) else {
        return Ok(None);
    };
    let (party, key, retired) = match person(c, code)? {
        Some((party, key)) => (party, key, false),
        None => match parties::find_by_retired_code(c, code)? {
            Some(party) => (party, FormKey::load(c)?, true),
            None => return Ok(None),
        },
    };
    let own = subscriptions::ids_of_party(c, party)?;
    let reach: Vec<SubscriptionId> = if ids.iter().all(|i| own.contains(i)) {
        Vec::new()
    } else {
        subscriptions::reaching(c, party)?
            .iter()
            .map(|s| s.id)
            .collect()
    };
    let mut r = Resolved {
        party,
        lang: asked.person(&parties::get_user(c, party)?.locale),
        key,
        retired,
        own: Vec::new(),
        groups: Vec::new(),
    };
    for id in ids {
        if own.contains(&id) {
            r.own.push(id);
        } else if reach.contains(&id) {
            r.groups.push(id);
        } else {
            return Ok(None);
        }
    }
    Ok(Some(r))
}

fn page(
    c: &mut DbConn,
    pre: &str,
    state: &'static str,
    r: &Resolved,
    code: &str,
    raw_ids: &str,
) -> crate::Result<UnsubscribePage> {
    let user = parties::get_user(c, r.party)?;
    let tz = validate::timezone(&user.timezone).unwrap_or(chrono_tz::UTC);
    let t = Words::new(r.lang);
    let style = Style {
        lang: r.lang,
        ..Style::new(tz, &user.locale)
    };
    let names: HashMap<i64, String> = items::list_collections(c)?
        .into_iter()
        .map(|k| (k.id.0, k.name))
        .collect();
    let mut subs: Vec<SubView> = subscriptions::list_for_party(c, r.party)?
        .iter()
        .filter(|s| r.own.contains(&s.id))
        .map(|s| view::describe(&t, s, &names, &style))
        .collect();
    if !r.groups.is_empty() {
        subs.extend(
            group_subs(c, &t, r.party, &names, &style)?
                .into_iter()
                .filter(|s| r.groups.contains(&SubscriptionId(s.id))),
        );
    }
    Ok(UnsubscribePage {
        t,
        state,
        path: format!("{pre}/s/{code}/unsubscribe/{raw_ids}"),
        manage: format!("{pre}/s/{code}"),
        csrf: r.key.token(code),
        subs,
    })
}

/// Stops what `r` names: the owner's own subscriptions the way an
/// unsubscribe link does (paused, unsent digests cancelled), and for the
/// group subscriptions, the owner's opt-out (the group and its other
/// members keep them). One transaction.
fn stop(c: &mut DbConn, now: DateTime<Utc>, r: &Resolved, via: remove::Via) -> crate::Result<()> {
    c.write_tx(|c| {
        if !r.own.is_empty() {
            remove::unsubscribe_in_tx(c, now, &r.own, via)?;
        }
        if !r.groups.is_empty() {
            remove::opt_out_in_tx(c, now, r.party, &r.groups, via)?;
        }
        Ok(())
    })
}

/// Undoes [`stop`]: the owner's own subscriptions resumed (from now, no
/// burst), their opt-outs from the group ones cleared.
fn restart(c: &mut DbConn, now: DateTime<Utc>, r: &Resolved) -> crate::Result<()> {
    for id in &r.own {
        manage::resume(c, *id, now)?;
    }
    c.write_tx(|c| {
        for id in &r.groups {
            subscriptions::opt_in_in_tx(c, *id, r.party)?;
        }
        Ok(())
    })
}

/// `GET`: what will stop, and the button, in the owner's language.
/// Writes nothing.
pub async fn show(
    State(app): State<App>,
    Path((code, ids)): Path<(String, String)>,
    asked: Asked,
) -> PageResult {
    let pre = prefix(&app);
    let lang = asked.visitor();
    let p = app
        .blocking(move |c| match resolve(c, &code, &ids, &asked)? {
            // A replaced code's page tells nothing of whose it is, its
            // language included: the visitor's.
            Some(r) if r.retired => Ok(Some(UnsubscribePage {
                t: Words::new(lang),
                state: "retired",
                path: format!("{pre}/s/{code}/unsubscribe/{ids}"),
                manage: String::new(),
                csrf: String::new(),
                subs: Vec::new(),
            })),
            Some(r) => page(c, &pre, "confirm", &r, &code, &ids).map(Some),
            None => Ok(None),
        })
        .await
        .map_err(Page::failed(lang))?
        .ok_or_else(|| Page::not_found(lang))?;
    Ok(Page::ok(p.render().map_err(render_failed)?))
}

/// What a POST to the link carries.
#[derive(Debug, PartialEq)]
enum Ask {
    /// RFC 8058's body, exactly.
    OneClick,
    /// A one-click attempt with some other body, or a body of another type.
    Malformed,
    /// Our own form (its token is checked).
    Form(HashMap<String, String>),
}

fn ask(headers: &HeaderMap, body: &[u8]) -> Ask {
    if content_type(headers).as_deref() == Some("multipart/form-data") {
        let ct = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        return if multipart_one_click(ct, body) {
            Ask::OneClick
        } else {
            Ask::Malformed
        };
    }
    if !is_form(headers) {
        return Ask::Malformed;
    }
    let f = form(body);
    if !f.contains_key("List-Unsubscribe") {
        return Ask::Form(f);
    }
    let exact = body
        .strip_suffix(b"\r\n")
        .or_else(|| body.strip_suffix(b"\n"))
        .unwrap_or(body);
    if exact == b"List-Unsubscribe=One-Click" {
        Ask::OneClick
    } else {
        Ask::Malformed
    }
}

/// A multipart body whose only field is `List-Unsubscribe` = `One-Click`.
fn multipart_one_click(content_type: &str, body: &[u8]) -> bool {
    let Some(boundary) = content_type.split(';').find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        k.eq_ignore_ascii_case("boundary")
            .then(|| v.trim_matches('"').to_string())
    }) else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return false;
    };
    let delim = format!("--{boundary}");
    let fields: Vec<(String, &str)> = text
        .split(delim.as_str())
        .filter_map(|part| {
            let (head, value) = part.split_once("\r\n\r\n")?;
            let name = head.split("name=\"").nth(1)?.split('"').next()?.to_string();
            Some((name, value.trim_end_matches("\r\n")))
        })
        .collect();
    matches!(fields.as_slice(), [(n, v)] if n == "List-Unsubscribe" && *v == "One-Click")
}

enum Outcome {
    NotFound,
    Forbidden(Locale),
    Malformed(Locale),
    Page(Box<UnsubscribePage>),
    OneClick(Locale),
}

/// `POST`: one-click, or our form with its token.
pub async fn act(
    State(app): State<App>,
    Path((code, ids)): Path<(String, String)>,
    headers: HeaderMap,
    asked: Asked,
    body: Result<RawBody, ApiError>,
) -> PageResult {
    let lang = asked.visitor();
    let ask = ask(&headers, &body.map_err(Page::failed(lang))?.0);
    let now = app.clock.now();
    let pre = prefix(&app);
    let out = app
        .blocking(move |c| {
            let Some(r) = resolve(c, &code, &ids, &asked)? else {
                return Ok(Outcome::NotFound);
            };
            match ask {
                Ask::Malformed => return Ok(Outcome::Malformed(r.lang)),
                Ask::Form(_) if r.retired => return Ok(Outcome::NotFound),
                Ask::Form(f) if !r.key.verify(&code, f.get("csrf").map(String::as_str)) => {
                    return Ok(Outcome::Forbidden(r.lang))
                }
                _ => {}
            }
            let via = if ask == Ask::OneClick {
                remove::Via::OneClick
            } else {
                remove::Via::Page
            };
            stop(c, now, &r, via)?;
            if ask == Ask::OneClick {
                return Ok(Outcome::OneClick(if r.retired { lang } else { r.lang }));
            }
            Ok(Outcome::Page(Box::new(page(
                c, &pre, "done", &r, &code, &ids,
            )?)))
        })
        .await
        .map_err(Page::failed(lang))?;
    finish(out, lang)
}

/// `POST …/undo` with the form token: resumes the link's subscriptions.
pub async fn undo(
    State(app): State<App>,
    Path((code, ids)): Path<(String, String)>,
    asked: Asked,
    body: Result<RawBody, ApiError>,
) -> PageResult {
    let lang = asked.visitor();
    let f = form(&body.map_err(Page::failed(lang))?.0);
    let now = app.clock.now();
    let pre = prefix(&app);
    let out = app
        .blocking(move |c| {
            let Some(r) = resolve(c, &code, &ids, &asked)?.filter(|r| !r.retired) else {
                return Ok(Outcome::NotFound);
            };
            if !r.key.verify(&code, f.get("csrf").map(String::as_str)) {
                return Ok(Outcome::Forbidden(r.lang));
            }
            restart(c, now, &r)?;
            Ok(Outcome::Page(Box::new(page(
                c, &pre, "undone", &r, &code, &ids,
            )?)))
        })
        .await
        .map_err(Page::failed(lang))?;
    finish(out, lang)
}

/// The answer; `lang` for a link that names nobody (the visitor's).
fn finish(out: Outcome, lang: Locale) -> PageResult {
    match out {
        Outcome::NotFound => Err(Page::not_found(lang)),
        Outcome::Forbidden(l) => Err(Page::forbidden(l)),
        Outcome::Malformed(l) => Err(Page::say(
            StatusCode::BAD_REQUEST,
            l,
            "page-not-done",
            "one-click-malformed",
        )),
        Outcome::OneClick(l) => Ok(Page::say(
            StatusCode::OK,
            l,
            "unsubscribed",
            "one-click-done",
        )),
        Outcome::Page(p) => Ok(Page::ok(p.render().map_err(render_failed)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_strictly() {
        assert_eq!(parse_ids("5"), Some(vec![SubscriptionId(5)]));
        assert_eq!(
            parse_ids("5,7,5"),
            Some(vec![SubscriptionId(5), SubscriptionId(7)])
        );
        for bad in [
            "",
            "0",
            "-1",
            "5,",
            ",5",
            "a",
            "5;7",
            "+5",
            "99999999999999999999",
        ] {
            assert_eq!(parse_ids(bad), None, "{bad}");
        }
    }

    #[test]
    fn one_click_bodies() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            "application/x-www-form-urlencoded".parse().unwrap(),
        );
        assert_eq!(ask(&h, b"List-Unsubscribe=One-Click"), Ask::OneClick);
        assert_eq!(ask(&h, b"List-Unsubscribe=One-Click\r\n"), Ask::OneClick);
        assert_eq!(ask(&h, b"List-Unsubscribe=Yes"), Ask::Malformed);
        assert_eq!(ask(&h, b"List-Unsubscribe=One-Click&x=1"), Ask::Malformed);
        assert!(matches!(ask(&h, b"csrf=abc"), Ask::Form(_)));
        let mut m = HeaderMap::new();
        m.insert(
            header::CONTENT_TYPE,
            "multipart/form-data; boundary=XyZ".parse().unwrap(),
        );
        let good = "--XyZ\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--XyZ--\r\n";
        assert_eq!(ask(&m, good.as_bytes()), Ask::OneClick);
        let bad = good.replace("One-Click", "Two-Clicks");
        assert_eq!(ask(&m, bad.as_bytes()), Ask::Malformed);
        let mut j = HeaderMap::new();
        j.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
        assert_eq!(ask(&j, b"List-Unsubscribe=One-Click"), Ask::Malformed);
    }
}
