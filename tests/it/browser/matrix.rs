//! The person's Matrix ID on the manage page in the browser: the page a
//! real email's manage link opens shows the operator's webhook masked,
//! with no form for it; asha types her Matrix ID and saves it (stored as
//! `contact --set` stores it, shown masked), types one with the wrong
//! sigil (the page again with one line, nothing written), then removes
//! hers.

use digestd::parties::{self, Channel};
use digestd::validate::UrlPolicy;

use super::common::at;
use super::common::browser::{Browser, Options};
use super::common::pages::snapshot;
use super::common::web::Web;
use super::{edit, in_browser, one_digest, PostOffice, NOW};

/// asha's Matrix address as stored.
fn stored(c: &mut digestd::db::DbConn, party: digestd::ids::PartyId) -> Option<String> {
    parties::contact_points(c, party)
        .unwrap()
        .into_iter()
        .find(|p| p.channel == Channel::Matrix.as_str())
        .map(|p| p.address)
}

fn matrix_on_the_manage_page(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = super::asha(&mut c);
    let url = "https://hooks.example.com/d/asha?token=s3cr3t";
    parties::set_webhook(&mut c, at(NOW), "asha", url, None, UrlPolicy::default()).unwrap();
    let mut po = PostOffice::new(web);
    assert!(po.run(&mut c, "2026-11-22T08:00:00Z").is_empty());
    edit(&mut c, &a, 1, "2026-11-22T10:00:00Z");
    let m = one_digest(&mut po, &mut c, "2026-11-23T08:00:00Z", 1);
    b.open(super::on_server(web, &m.manage));
    assert_eq!(b.title(), "Your digests · digestd");
    let t = b.text();
    assert!(t.contains("webhook: https://hooks.example.com/***"), "{t}");
    assert!(t.contains("set by the operator"), "{t}");
    assert!(!b.source().contains("s3cr3t"));

    // Her Matrix ID: saved, shown masked.
    b.fill("#matrix", "@asha:example.org");
    b.press("#matrix-form button[type=submit]");
    assert!(b.url().ends_with("?done=matrix"), "{}", b.url());
    let t = b.text();
    assert!(t.contains("Saved: digests by Matrix"), "{t}");
    assert!(
        t.contains("matrix: @a***:example.org · not verified"),
        "{t}"
    );
    assert!(!b.source().contains("@asha:example.org"));
    assert_eq!(
        stored(&mut c, a.party).as_deref(),
        Some("@asha:example.org")
    );
    b.shot("manage-matrix");

    // One with the wrong sigil: the page again, one line, nothing written.
    let before = snapshot(&mut c);
    b.fill("#matrix", "asha:example.org");
    b.press("#matrix-form button[type=submit]");
    let err = b.text_of("p.error");
    assert!(err.contains("invalid Matrix ID"), "{err}");
    assert!(err.contains("neither @ (a user) nor ! (a room)"), "{err}");
    assert_eq!(snapshot(&mut c), before);
    assert!(b.text().contains("matrix: @a***:example.org"));
    b.shot("manage-matrix-refused");

    // Removed.
    b.press("#unmatrix-form button[type=submit]");
    assert!(b.url().ends_with("?done=unmatrix"), "{}", b.url());
    assert!(b
        .text()
        .contains("Removed: nothing more is sent to you by Matrix."));
    assert_eq!(stored(&mut c, a.party), None);
    assert!(b.text().contains("Add Matrix ID"));
}

#[test]
fn a_matrix_id_is_added_masked_and_refused_on_the_manage_page() {
    in_browser(Options::default(), matrix_on_the_manage_page);
}
