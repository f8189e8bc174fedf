//! Quiet hours on the manage page in the browser: from a real email's
//! manage link, asha types hers; her 09:00 Rota digest falls inside them
//! and the page says it is still sent; a window with an en dash is the
//! page again with one line, nothing written; clearing the field ends
//! them.

use digestd::parties;

use super::common::browser::{Browser, Options};
use super::common::pages::snapshot;
use super::common::web::Web;
use super::{edit, in_browser, one_digest, PostOffice};

const STILL_SENT: &str =
    "Rota: sent at 09:00, inside your quiet hours: digests are still sent; only notifications and hourly digests wait.";

fn quiet_hours_on_the_manage_page(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = super::asha(&mut c);
    let mut po = PostOffice::new(web);
    assert!(po.run(&mut c, "2026-11-22T08:00:00Z").is_empty());
    edit(&mut c, &a, 1, "2026-11-22T10:00:00Z");
    let m = one_digest(&mut po, &mut c, "2026-11-23T08:00:00Z", 1);
    b.open(super::on_server(web, &m.manage));
    assert_eq!(b.value_of("#quiet_hours"), "");
    assert!(!b.text().contains("inside your quiet hours"));

    b.fill("#quiet_hours", "08:00-10:30");
    b.press("#quiet_hours ~ p button[type=submit]");
    assert!(b.url().ends_with("?done=prefs"), "{}", b.url());
    assert_eq!(b.value_of("#quiet_hours"), "08:00-10:30");
    assert_eq!(b.text_of("p.quiet-note"), STILL_SENT);
    let stored = parties::get_user(&mut c, a.party).unwrap().quiet_hours;
    assert_eq!(stored, "08:00-10:30");
    b.shot("manage-quiet");

    // An en dash between the times: the page again, one line, nothing written.
    let before = snapshot(&mut c);
    b.fill("#quiet_hours", "08:00–10:30");
    b.press("#quiet_hours ~ p button[type=submit]");
    let err = b.text_of("p.error");
    assert!(err.contains("invalid quiet hours"), "{err}");
    assert!(err.contains("U+2013"), "{err}");
    assert_eq!(snapshot(&mut c), before);

    // Cleared: no quiet hours, no note.
    b.fill("#quiet_hours", "");
    b.press("#quiet_hours ~ p button[type=submit]");
    assert!(b.url().ends_with("?done=prefs"), "{}", b.url());
    assert!(!b.text().contains("inside your quiet hours"));
    assert_eq!(parties::get_user(&mut c, a.party).unwrap().quiet_hours, "");
}

#[test]
fn quiet_hours_are_set_refused_and_cleared_on_the_manage_page() {
    in_browser(Options::default(), quiet_hours_on_the_manage_page);
}
