//! Seen marks and sharing: recipients of the same window whose marks leave
//! out the same items share one stored rendering, as recipients without
//! marks do, in whatever batches of the hand-off they come; one whose
//! marks leave out other items gets their own. The whole-digest page a digest links to leaves out what the digest left
//! out, and says so. On both back ends.

use crate::common;

use common::digest::user;
use common::seen::{change_by, hourly, mark, three_changes};
use common::web::{each_backend, Web};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::{nt_bodies, nt_messages, nt_requests, parties};
use digestd::db::DbConn;
use digestd::ids::SubscriptionId;
use digestd::manage;
use digestd::schedule::tick::{tick, tick_in_chunks};

use crate::http_pages_digest::{link_in_digest, linked_composer, tick_linked, BASE};
use crate::seen::{digests, of};

/// Docs, which every one of `who` follows hourly from 08:30 (their
/// subscriptions, in order); bob edits it.
fn docs_for(c: &mut DbConn, who: &[&str]) -> (String, Vec<SubscriptionId>) {
    user(c, "bob", "UTC", "en-GB", None);
    let docs = digestd::items::create_collection(c, at("2026-11-01T00:00:00Z"), "Docs", None)
        .unwrap()
        .uuid;
    let mut subs = Vec::new();
    for name in who {
        user(c, name, "UTC", "en-GB", None);
        let s = manage::subscribe(c, at("2026-11-23T08:30:00Z"), &hourly(name, &docs)).unwrap();
        subs.push(s.id());
    }
    (docs, subs)
}

/// amy, ben, cy, dan and eve follow Docs (subscribed in that order), where
/// Alpha, Beta and Gamma changed; amy and ben saw Alpha after its change
/// (at different times).
fn five_following(c: &mut DbConn) {
    let (docs, _) = docs_for(c, &["amy", "ben", "cy", "dan", "eve"]);
    three_changes(c, &docs);
    mark(c, "amy", 1, "2026-11-23T08:45:00Z");
    mark(c, "ben", 1, "2026-11-23T08:55:00Z");
}

/// The shared rendering each recipient's digest points at, if any.
fn body_of(c: &mut DbConn, who: &str) -> Option<i64> {
    nt_requests::table
        .inner_join(parties::table.on(parties::id.eq(nt_requests::party_to)))
        .inner_join(nt_messages::table)
        .filter(parties::name.eq(who))
        .select(nt_messages::body_id)
        .first(c)
        .unwrap()
}

/// amy and ben saw Alpha (at different times, after its change), cy saw
/// Beta, dan and eve saw nothing: amy and ben share one rendering, dan
/// and eve another, cy's is her own; two renderings stored in all.
fn equal_marks_share_one_stored_rendering(db: &TestDb) {
    let mut c = db.conn();
    five_following(&mut c);
    mark(&mut c, "cy", 2, "2026-11-23T08:45:00Z");
    tick_linked(&mut c, "2026-11-23T09:00:00Z", BASE);

    let (amy, ben, cy) = (
        body_of(&mut c, "amy"),
        body_of(&mut c, "ben"),
        body_of(&mut c, "cy"),
    );
    let (dan, eve) = (body_of(&mut c, "dan"), body_of(&mut c, "eve"));
    assert!(amy.is_some() && amy == ben, "{amy:?} {ben:?}");
    assert!(dan.is_some() && dan == eve && dan != amy, "{dan:?} {eve:?}");
    assert!(cy.is_none(), "cy's is hers alone: {cy:?}");
    let stored: i64 = nt_bodies::table.count().get_result(&mut c).unwrap();
    assert_eq!(stored, 2);

    // As each reads it: the shared rendering filled with their own links.
    let all = digests(&mut c, 0);
    let sentence = "(1 change you have already seen is left out)";
    for (who, gone) in [("amy", "Alpha"), ("ben", "Alpha"), ("cy", "Beta")] {
        let d = of(&all, who);
        assert_eq!(d.len(), 1, "{all:#?}");
        let (text, html) = (&d[0].1, &d[0].2);
        assert!(text.lines().next().unwrap().ends_with(sentence), "{text}");
        assert!(!text.contains(gone) && text.contains("Gamma"), "{text}");
        assert!(html.contains(sentence) && !html.contains(gone), "{html}");
    }
    for who in ["dan", "eve"] {
        let text = &of(&all, who)[0].1;
        assert!(!text.contains("already seen"), "{text}");
        assert!(["Alpha", "Beta", "Gamma"].iter().all(|t| text.contains(t)));
    }
    // Each their own links in the shared rendering.
    let links = |who: &str| {
        let text = &of(&all, who)[0].1;
        text.lines()
            .filter(|l| l.contains(BASE))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_ne!(links("amy"), links("ben"));
}

/// amy and ben saw Alpha; cy, dan and eve saw nothing. Each digest is
/// composed in a batch of its own (as marked recipients among many are in
/// a tick's batches of 500): amy's rendering is stored for ben, as the
/// chunk's marks give their list to both; cy's, the first of the
/// unfiltered list, is her own, and dan's, that list read again in a later
/// batch, is stored and eve shares it.
fn readers_in_other_batches_share_one_stored_rendering(db: &TestDb) {
    let mut c = db.conn();
    five_following(&mut c);
    let mut comp = linked_composer(BASE);
    comp.post_batch = 1;
    tick(&mut c, at("2026-11-23T09:00:00Z"), &mut comp).unwrap();

    let [amy, ben, cy, dan, eve] = ["amy", "ben", "cy", "dan", "eve"].map(|w| body_of(&mut c, w));
    assert!(amy.is_some() && amy == ben, "{amy:?} {ben:?}");
    assert!(cy.is_none(), "cy's is hers alone: {cy:?}");
    assert!(dan.is_some() && dan == eve && dan != amy, "{dan:?} {eve:?}");
    let stored: i64 = nt_bodies::table.count().get_result(&mut c).unwrap();
    assert_eq!(stored, 2);
    let all = digests(&mut c, 0);
    for who in ["amy", "ben"] {
        let text = &of(&all, who)[0].1;
        assert!(
            text.contains("already seen") && !text.contains("Alpha"),
            "{text}"
        );
    }
    for who in ["cy", "dan", "eve"] {
        let text = &of(&all, who)[0].1;
        assert!(["Alpha", "Beta", "Gamma"].iter().all(|t| text.contains(t)));
    }
}

/// amy, ben and cy saw Alpha; the tick goes two subscriptions a chunk.
/// The first chunk stores amy's rendering for ben; cy, in the second,
/// gets the same list (kept for the tick) and shares what is stored.
/// dan and eve, alone in their chunks with the whole list, get their own.
fn equal_marks_in_a_later_chunk_share_the_stored_rendering(db: &TestDb) {
    let mut c = db.conn();
    five_following(&mut c);
    mark(&mut c, "cy", 1, "2026-11-23T08:50:00Z");
    let mut comp = linked_composer(BASE);
    tick_in_chunks(&mut c, at("2026-11-23T09:00:00Z"), &mut comp, 2).unwrap();

    let [amy, ben, cy, dan, eve] = ["amy", "ben", "cy", "dan", "eve"].map(|w| body_of(&mut c, w));
    assert!(
        amy.is_some() && amy == ben && amy == cy,
        "{amy:?} {ben:?} {cy:?}"
    );
    assert_eq!((dan, eve), (None, None));
    let stored: i64 = nt_bodies::table.count().get_result(&mut c).unwrap();
    assert_eq!(stored, 1);
}

/// The items `text` shows of `Item 1` to `Item n`, in number order.
fn shown(text: &str, n: u128) -> Vec<u128> {
    let names = |i: u128| {
        let name = format!("Item {i}");
        text.match_indices(&name)
            .any(|(at, _)| !text[at + name.len()..].starts_with(|c: char| c.is_ascii_digit()))
    };
    (1..=n).filter(|i| names(*i)).collect()
}

/// Items 1 to 103 created in `docs` in the window, a second apart from
/// 08:31:01, the first `own` by amy and the rest by bob: more than the
/// 100 changes a window keeps (twice `max_items`, at least 100); the rest
/// it counts.
fn hundred_and_three(c: &mut DbConn, docs: &str, own: u128) {
    for i in 1..=103u128 {
        let when = format!("2026-11-23T08:{:02}:{:02}Z", 31 + i / 60, i % 60);
        let by = if i <= own { "amy" } else { "bob" };
        change_by(c, by, docs, i, "created", &format!("Item {i}"), &when);
    }
}

/// amy's digest and the page it links to, after [`hundred_and_three`]
/// (`own` of them hers) and her marks on `saw`, all after their changes,
/// with every one of `who` (amy first) following Docs: her digest's first
/// line and the page's heading both say `items` changes and that two she
/// saw are left out. Their subscriptions, her digest's text, the page.
fn amy_saw(web: &Web, who: &[&str], own: u128, saw: [u128; 3], items: usize) -> Saw {
    let mut c = web.db.conn();
    let (docs, subs) = docs_for(&mut c, who);
    hundred_and_three(&mut c, &docs, own);
    for i in saw {
        mark(&mut c, "amy", i, "2026-11-23T08:59:00Z");
    }
    tick_linked(&mut c, "2026-11-23T09:00:00Z", BASE);
    let all = digests(&mut c, 0);
    let email = of(&all, "amy")[0].1.clone();
    let sentence = "(2 changes you have already seen are left out)";
    let first = email.lines().next().unwrap();
    let heading = format!("{items} changes in Docs");
    assert!(
        first.starts_with(&heading) && first.ends_with(sentence),
        "{first}"
    );
    let page = web.get(&link_in_digest(&mut c, subs[0]), None);
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(sentence), "{}", page.text);
    let all_items = format!("All {items} items");
    assert!(page.text.contains(&all_items), "{}", page.text);
    (subs, email, page.text)
}

/// What [`amy_saw`] answers.
type Saw = (Vec<SubscriptionId>, String, String);

/// 103 items changed in the window (a digest keeps its first 100 and
/// counts the rest); amy saw the first two and the 102nd. Her digest
/// leaves out the two it kept and counts the 102nd in its rest; the page
/// it links to lists every item but the same two and says the same.
#[test]
fn the_page_leaves_out_what_the_digest_did() {
    each_backend(at("2026-11-23T09:30:00Z"), |web| {
        let (subs, email, page) = amy_saw(web, &["amy", "ben"], 0, [1, 2, 102], 101);
        let listed = shown(&page, 103);
        assert_eq!(listed, (3..=103).collect::<Vec<_>>());
        // The digest's lines are the page's first.
        let in_email = shown(&email, 103);
        assert!(
            !in_email.is_empty() && listed.starts_with(&in_email),
            "{in_email:?}"
        );

        // ben saw nothing: his page lists all, and says nothing of marks.
        let mut c = web.db.conn();
        let page = web.get(&link_in_digest(&mut c, subs[1]), None);
        assert!(page.text.contains("All 103 items"), "{}", page.text);
        assert!(!page.text.contains("already seen"), "{}", page.text);
    });
}

/// amy created items 1 to 3 herself, and her digests leave her own
/// changes out: hers keeps everyone's first 100 but those three (items 4
/// to 100) and counts 101 to 103. She saw 4, 5 and 101: her digest leaves
/// out 4 and 5 and counts 101 in its rest; the page lists 6 to 103 and
/// says the same two are left out.
#[test]
fn the_page_of_a_list_without_its_readers_own_changes_leaves_out_what_the_digest_did() {
    each_backend(at("2026-11-23T09:30:00Z"), |web| {
        let (_, _, page) = amy_saw(web, &["amy"], 3, [4, 5, 101], 98);
        assert_eq!(shown(&page, 103), (6..=103).collect::<Vec<_>>());
    });
}

crate::backend_tests!(
    equal_marks_share_one_stored_rendering,
    readers_in_other_batches_share_one_stored_rendering,
    equal_marks_in_a_later_chunk_share_the_stored_rendering
);
