//! The person's pages in a real browser (headless Chromium over WebDriver,
//! `common::browser`), on each back end: the links come out of a real
//! `.eml` that the `dir` transport wrote after a real tick and queue run;
//! the browser opens them, fills the forms and presses the buttons; the
//! next ticks must follow each change. Also the RFC 8058 one-click POST as
//! a mail provider sends it, the pages with script turned off, and the
//! manage page at a phone's width.
//!
//! Every page visited is saved as a PNG (`common::browser::Browser::shot`);
//! `docs/pages.md` shows them. Skipped with a line on stderr when Chromium
//! is not installed, unless `DIGESTD_TEST_BROWSER=required`.
//!
//! A new flow is one function `fn flow(web: &Web, b: &Browser)` and one
//! `#[test]` that hands it to [`in_browser`]. Sign-up with its
//! verification link (`browser/signup.rs`), the operator's pages
//! (`browser/admin.rs`), the Matrix ID form (`browser/matrix.rs`) and
//! "Send it now" with the "How often and where" form
//! (`browser/cadence.rs`), quiet hours (`browser/quiet.rs`), the pages
//! in German (`browser/languages.rs`), the one-click POST
//! (`browser/one_click.rs`) and the pages at a phone's width
//! (`browser/phone.rs`) are flows of their own files.

use crate::common;

#[path = "browser/admin.rs"]
mod admin;
#[path = "browser/cadence.rs"]
mod cadence;
#[path = "browser/languages.rs"]
mod languages;
#[path = "browser/matrix.rs"]
mod matrix;
#[path = "browser/one_click.rs"]
mod one_click;
#[path = "browser/phone.rs"]
mod phone;
#[path = "browser/quiet.rs"]
mod quiet;
#[path = "browser/signup.rs"]
mod signup;

use std::collections::HashSet;
use std::path::PathBuf;

use common::at;
use common::browser::{Browser, Options};
use common::pages::{code, paused, snapshot};
use common::web::Web;
use common::TestDb;
use digestd::config::Config;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::ids::{PartyId, SubscriptionId};
use digestd::parties::{self, Channel, ContactChange, NewUser};
use digestd::subscriptions::{SubscribeRequest, Subscribed};
use digestd::{items, manage, schedule};

/// The server's clock at the start; the first digest goes out a day later.
const NOW: &str = "2026-11-22T00:30:00Z";
const ONE_CLICK: &str = "List-Unsubscribe=One-Click";

/// Runs `flow` in one browser against the server on each back end. The
/// server's `base_url` is its own address, so the links it writes into
/// messages (a sign-up's verification link) lead back to it.
fn in_browser(options: Options, flow: impl Fn(&Web, &Browser)) {
    let Some(b) = Browser::start_with(options) else {
        return;
    };
    flow(&Web::start_linked(TestDb::sqlite(), at(NOW)), &b);
    if let Some(pg) = TestDb::postgres() {
        flow(&Web::start_linked(pg, at(NOW)), &b);
    }
}

/// What the `dir` transport wrote, read back as a mail program would.
#[derive(Debug)]
struct Eml {
    to: String,
    subject: String,
    /// The `List-Unsubscribe` URL, without its angle brackets.
    list_unsubscribe: Option<String>,
    /// Whether `List-Unsubscribe-Post: List-Unsubscribe=One-Click` is there.
    one_click: bool,
    /// The links in the text part.
    manage: String,
    unsubscribe: Option<String>,
    text: String,
}

/// A line's URL after `label` in the text part.
fn link_after(text: &str, label: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .map(|u| u.trim().to_string())
}

impl Eml {
    fn parse(raw: &[u8]) -> Eml {
        let m = mail_parser::MessageParser::default()
            .parse(raw)
            .expect("a message");
        let text = m.body_text(0).expect("a text part").to_string();
        let html = m.body_html(0).expect("an HTML part").to_string();
        let manage = link_after(&text, "Manage your subscriptions:").expect("a manage link");
        let unsubscribe = link_after(&text, "Unsubscribe from this digest:");
        // The HTML part links to the same places.
        assert!(html.contains(&format!("href=\"{manage}\"")), "{html}");
        if let Some(u) = &unsubscribe {
            assert!(html.contains(&format!("href=\"{u}\"")), "{html}");
        }
        Eml {
            to: m.to().unwrap().first().unwrap().address().unwrap().into(),
            subject: m.subject().unwrap_or_default().into(),
            list_unsubscribe: m.header_raw("List-Unsubscribe").map(|v| {
                let v: String = v.split_whitespace().collect();
                v.trim_start_matches('<').trim_end_matches('>').to_string()
            }),
            one_click: m.header_raw("List-Unsubscribe-Post").map(str::trim) == Some(ONE_CLICK),
            manage,
            unsubscribe,
            text,
        }
    }
}

/// `digestd tick` and `digestd queue run` at one instant, as the CLI runs
/// them (the lease, the composer, the `dir` transport), with links to the
/// test's server; hands back the messages written by this run.
struct PostOffice {
    cfg: Config,
    dir: tempfile::TempDir,
    seen: HashSet<PathBuf>,
}

impl PostOffice {
    fn new(web: &Web) -> PostOffice {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config::default();
        cfg.digest.base_url = web.base.clone();
        cfg.email.dir = dir.path().display().to_string();
        PostOffice {
            cfg,
            dir,
            seen: HashSet::new(),
        }
    }

    fn run(&mut self, c: &mut DbConn, when: &str) -> Vec<Eml> {
        self.run_raw(c, when)
            .iter()
            .map(|raw| Eml::parse(raw))
            .collect()
    }

    /// As `run`, the messages as the bytes of their files.
    fn run_raw(&mut self, c: &mut DbConn, when: &str) -> Vec<Vec<u8>> {
        let t = at(when);
        let lease = self.cfg.schedule.lease_for();
        let mut comp = digestd::digest::Composer::new(&self.cfg.digest, &self.cfg.email).unwrap();
        schedule::run_tick(c, t, "browser-test", lease, &mut comp)
            .unwrap()
            .expect("the tick lease");
        let mut d = Delivery::new(&self.cfg.email, crate::common::rt()).unwrap();
        queue::run_queue(c, &mut d, t, "browser-test", lease).unwrap();
        let mut new: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "eml") && !self.seen.contains(p))
            .collect();
        new.sort();
        self.seen.extend(new.iter().cloned());
        new.iter().map(|p| std::fs::read(p).unwrap()).collect()
    }
}

/// asha in Madrid (24-hour clock) follows the Rota daily at 09:00 by
/// email; ops edits it every day.
struct Asha {
    party: PartyId,
    daily: SubscriptionId,
    rota: String,
}

fn asha(c: &mut DbConn) -> Asha {
    let t0 = at("2026-11-01T00:00:00Z");
    let party = parties::create_user(
        c,
        t0,
        &NewUser {
            name: "asha".into(),
            timezone: "Europe/Madrid".into(),
            email: Some("asha@example.com".into()),
            locale: Some("en-GB".into()),
            ..Default::default()
        },
    )
    .unwrap();
    parties::change_contact(c, t0, "asha", Channel::Email, &ContactChange::Verify).unwrap();
    let ops = NewUser {
        name: "ops".into(),
        timezone: "UTC".into(),
        ..Default::default()
    };
    parties::create_user(c, t0, &ops).unwrap();
    let rota = items::create_collection(c, t0, "Rota", None).unwrap().uuid;
    let daily = match manage::subscribe(
        c,
        at("2026-11-21T00:00:00Z"),
        &SubscribeRequest {
            party: "asha".into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            collection: Some(rota.clone()),
            hour: Some(9),
            ..Default::default()
        },
    )
    .unwrap()
    {
        Subscribed::Created(id) => id,
        other => panic!("{other:?}"),
    };
    Asha { party, daily, rota }
}

/// ops changes shift `n` of the Rota at `when`.
fn edit(c: &mut DbConn, a: &Asha, n: u128, when: &str) {
    let i = items::ItemInput {
        uuid: uuid::Uuid::from_u128(n).to_string(),
        collection: Some(a.rota.clone()),
        kind: "event".into(),
        title: format!("Shift {n}"),
        start: Some("2026-12-01T09:00:00Z".into()),
        actor: "ops".into(),
        at: Some(when.into()),
        ..Default::default()
    };
    items::put_item(c, at(when), &i).unwrap();
}

/// The digest asha got at `when`, the only message of that run.
fn one_digest(po: &mut PostOffice, c: &mut DbConn, when: &str, shift: u128) -> Eml {
    let mut got = po.run(c, when);
    assert_eq!(got.len(), 1, "{when}: {got:?}");
    let m = got.remove(0);
    assert_eq!(m.to, "asha@example.com");
    assert!(m.text.contains(&format!("Shift {shift}")), "{}", m.text);
    m
}

/// The link from a message, checked to point at the test's server.
fn on_server<'a>(web: &Web, url: &'a str) -> &'a str {
    assert!(url.starts_with(&format!("{}/s/", web.base)), "{url}");
    url
}

/// The manage page from the first digest's link, as the person sees it;
/// the daily hour changed (new daily digests only) and then this digest's
/// own hour, to 07:00.
fn change_the_hours_on_the_manage_page(web: &Web, b: &Browser, a: &Asha, manage: &str, code: &str) {
    // Manage: the page as the person sees it.
    web.clock.set(at("2026-11-23T08:05:00Z"));
    b.open(on_server(web, manage));
    assert_eq!(b.title(), "Your digests · digestd");
    let t = b.text();
    assert!(t.contains("Your digests, asha"), "{t}");
    assert!(
        t.contains("Rota: changes") && t.contains("Daily at 09:00"),
        "{t}"
    );
    assert!(
        t.contains("Europe/Madrid (CET)") && t.contains("24-hour clock"),
        "{t}"
    );
    assert_eq!(b.value_of("#daily_hour"), "8");
    b.shot("manage");

    // The daily hour is the one new daily digests get: this one keeps 09:00.
    b.choose("#daily_hour", "7");
    b.press("form input[name=action][value=prefs] ~ p button");
    assert!(
        b.url().ends_with(&format!("/s/{code}?done=prefs")),
        "{}",
        b.url()
    );
    let t = b.text();
    assert!(t.contains("Saved."), "{t}");
    assert!(t.contains("New daily digests at (now 07:00)"), "{t}");
    assert!(t.contains("Daily at 09:00"), "{t}");
    assert_eq!(b.value_of("#daily_hour"), "7");
    // This digest's own time, through its form: 07:00.
    let hour = format!("#hour-{}", a.daily);
    assert_eq!(b.value_of(&hour), "9");
    b.choose(&hour, "7");
    b.press(&format!("{hour} ~ button"));
    assert!(b.url().ends_with("?done=hour"), "{}", b.url());
    let t = b.text();
    assert!(
        t.contains("Changed:") && t.contains("Daily at 07:00"),
        "{t}"
    );
    assert_eq!(b.value_of(&hour), "7");
    b.shot("manage-changed");
}

/// Manage and unsubscribe, from the links of a real email, in the browser:
/// change the daily hour and the digest's own hour, unsubscribe (the GET
/// changes nothing), undo, unsubscribe again; each tick after a change
/// follows it.
fn links_from_a_real_email(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = asha(&mut c);
    let mut po = PostOffice::new(web);
    // Ticks on time: nothing changed for the first one.
    assert!(po.run(&mut c, "2026-11-22T08:00:00Z").is_empty());
    edit(&mut c, &a, 1, "2026-11-22T10:00:00Z");
    // 09:00 in Madrid is 08:00Z; nothing goes before it.
    let early = po.run(&mut c, "2026-11-23T07:59:00Z");
    assert!(early.is_empty(), "{early:?}");
    let m = one_digest(&mut po, &mut c, "2026-11-23T08:00:00Z", 1);
    assert_eq!(m.subject, "Daily digest: Rota");
    assert!(
        m.text.lines().next() == Some("1 change in Rota since Sunday 09:00"),
        "{}",
        m.text
    );
    let unsub = m.unsubscribe.clone().expect("an unsubscribe link");
    assert_eq!(m.list_unsubscribe.as_deref(), Some(unsub.as_str()));
    assert!(m.one_click, "{m:?}");
    let code = code(&mut c, a.party);
    assert_eq!(m.manage, format!("{}/s/{code}", web.base));
    assert_eq!(
        unsub,
        format!("{}/s/{code}/unsubscribe/{}", web.base, a.daily)
    );

    change_the_hours_on_the_manage_page(web, b, &a, &m.manage, &code);
    // The next digest comes at 07:00 in Madrid (06:00Z), not at 09:00.
    edit(&mut c, &a, 2, "2026-11-23T10:00:00Z");
    assert!(po.run(&mut c, "2026-11-24T05:59:00Z").is_empty());
    let m = one_digest(&mut po, &mut c, "2026-11-24T06:00:00Z", 2);
    assert!(po.run(&mut c, "2026-11-24T08:00:00Z").is_empty());

    // Unsubscribe: the GET shows what stops and writes nothing.
    let unsub = m.unsubscribe.clone().expect("an unsubscribe link");
    edit(&mut c, &a, 3, "2026-11-24T10:00:00Z");
    web.clock.set(at("2026-11-24T10:30:00Z"));
    let before = snapshot(&mut c);
    b.open(on_server(web, &unsub));
    assert_eq!(snapshot(&mut c), before, "a GET wrote something");
    let t = b.text();
    assert!(
        t.contains("Unsubscribe?") && t.contains("Rota: changes"),
        "{t}"
    );
    assert!(t.contains("Daily at 07:00"), "{t}");
    b.shot("unsubscribe");
    b.press("form button[type=submit]");
    let t = b.text();
    assert!(
        t.contains("Unsubscribed") && t.contains("Nothing more of these"),
        "{t}"
    );
    assert!(paused(&mut c, a.daily));
    b.shot("unsubscribed");
    assert!(po.run(&mut c, "2026-11-25T06:00:00Z").is_empty());

    // Undo: live again from now; the next digest holds what was waiting
    // when it was stopped (Shift 3, marked with when it happened) and what
    // changed since: an unsubscribe that is undone drops nothing.
    web.clock.set(at("2026-11-25T07:00:00Z"));
    b.press("form[action$='/undo'] button");
    let t = b.text();
    assert!(t.contains("Subscribed again"), "{t}");
    assert!(!paused(&mut c, a.daily));
    b.shot("subscribed-again");
    edit(&mut c, &a, 4, "2026-11-25T10:00:00Z");
    let m = one_digest(&mut po, &mut c, "2026-11-26T06:00:00Z", 4);
    assert!(
        m.text
            .contains("Earlier, Tue 24 Nov, 11:00 CET: ops created the event Shift 3"),
        "what was waiting is kept: {}",
        m.text
    );

    // Unsubscribe again, from the newest message: nothing more comes.
    web.clock.set(at("2026-11-26T07:00:00Z"));
    b.open(on_server(web, m.unsubscribe.as_deref().unwrap()));
    b.press("form button[type=submit]");
    assert!(b.text().contains("Unsubscribed"));
    assert!(paused(&mut c, a.daily));
    edit(&mut c, &a, 5, "2026-11-26T10:00:00Z");
    assert!(po.run(&mut c, "2026-11-27T06:00:00Z").is_empty());
    assert!(po.run(&mut c, "2026-11-28T06:00:00Z").is_empty());
}

#[test]
fn the_links_of_a_real_email_work_in_a_browser() {
    in_browser(Options::default(), links_from_a_real_email);
}

/// With script turned off the pages work the same: the forms are plain.
fn without_script(web: &Web, b: &Browser) {
    // Script is really off: a page that sets its title by script keeps none.
    b.open("data:text/html,<title>off</title><script>document.title='on'</script>");
    assert_eq!(b.title(), "off");
    let mut c = web.db.conn();
    let a = asha(&mut c);
    let code = code(&mut c, a.party);
    b.open(&web.url(&format!("/s/{code}")));
    b.choose("#daily_hour", "18");
    b.choose("#week_start", "sun");
    b.press("form input[name=action][value=prefs] ~ p button");
    let t = b.text();
    assert!(t.contains("Saved.") && t.contains("(now 18:00)"), "{t}");
    assert!(t.contains("Weeks start on (now Sunday)"), "{t}");
    b.press(&format!("#sub-{} input[value=pause] ~ button", a.daily));
    assert!(b.text().contains("Paused."));
    assert!(paused(&mut c, a.daily));
    b.press(&format!("#sub-{} input[value=resume] ~ button", a.daily));
    assert!(b.text().contains("Resumed"));
    assert!(!paused(&mut c, a.daily));
    b.open(&web.url(&format!("/s/{code}/unsubscribe/{}", a.daily)));
    b.press("form button[type=submit]");
    assert!(b.text().contains("Unsubscribed"));
    assert!(paused(&mut c, a.daily));
    b.press("form[action$='/undo'] button");
    assert!(b.text().contains("Subscribed again"));
    assert!(!paused(&mut c, a.daily));
}

#[test]
fn the_pages_work_without_script() {
    in_browser(
        Options {
            javascript: false,
            ..Options::default()
        },
        without_script,
    );
}
