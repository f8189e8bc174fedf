//! The manage and unsubscribe pages at a phone's width (390 CSS pixels):
//! nothing is wider than the screen, even a collection's long name with
//! nowhere to break.

use digestd::subscriptions::SubscribeRequest;
use digestd::{items, manage};

use super::common::at;
use super::common::browser::{self, Browser, Options};
use super::common::pages::code;
use super::common::web::Web;
use super::{asha, in_browser};

/// At a phone's width (390 CSS pixels) nothing is wider than the screen.
fn phone_width(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = asha(&mut c);
    // A long name with nowhere to break must wrap, not widen the page.
    let long = items::create_collection(
        &mut c,
        at("2026-11-01T00:00:00Z"),
        "WeekendAndHolidayOnCallRotaForTheSecondFloor",
        None,
    )
    .unwrap()
    .uuid;
    manage::subscribe(
        &mut c,
        at("2026-11-21T00:00:00Z"),
        &SubscribeRequest {
            party: "asha".into(),
            frequency: "weekly".into(),
            kind: "forward".into(),
            collection: Some(long),
            day: Some("mon".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let code = code(&mut c, a.party);
    b.resize(390, 844);
    for (path, name) in [
        (format!("/s/{code}"), "manage-phone"),
        (
            format!("/s/{code}/unsubscribe/{}", a.daily),
            "unsubscribe-phone",
        ),
    ] {
        b.open(&web.url(&path));
        let (page, screen) = b.widths();
        assert_eq!(screen, 390, "the window is a phone's");
        assert!(
            page <= screen,
            "{path}: {page} px wide on a {screen} px screen"
        );
        b.shot(name);
    }
    b.resize(browser::WIDTH, browser::HEIGHT);
}

#[test]
fn the_pages_fit_a_phone() {
    in_browser(Options::default(), phone_width);
}
