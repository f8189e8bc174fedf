//! Unit tests of `render`.

use super::*;
use crate::digest::words::Line;

fn body(more: usize) -> Body {
    let line = |t: &str| {
        Line::new(
            "ann changed the start time of ",
            t,
            " from 3:00 PM to 4:00 PM",
        )
    };
    Body {
        subject: "Daily digest: Calendar & <Co>".into(),
        heading: "2 changes in Calendar & <Co> since Monday".into(),
        sections: vec![Section {
            name: "Calendar & \"Co\"".into(),
            lines: vec![line("Janitor's <Pipe> Dream"), line("Budget sync")],
        }],
        more,
        calendar: None,
        words: Words::new(
            &Style::new("America/Los_Angeles".parse().unwrap(), "en-US"),
            more,
        ),
    }
}

fn frame<'a>(
    names: &'a dyn Fn(CollectionId) -> Cow<'a, str>,
    people: &'a dyn Fn(PartyId) -> Cow<'a, str>,
    unsubscribe: Option<String>,
) -> Frame<'a> {
    let base = "https://x.example/a&b?c='d'<e>";
    Frame {
        style: Style::new("America/Los_Angeles".parse().unwrap(), "en-US"),
        kind: Kind::Modification,
        frequency: Frequency::Daily,
        window_start: chrono::DateTime::UNIX_EPOCH,
        subscription: None,
        window_end: chrono::DateTime::UNIX_EPOCH,
        collection: None,
        collection_name: names,
        party_name: people,
        max_items: 50,
        sms_segments: 3,
        manage_url: format!("{base}/s/code"),
        unsubscribe_url: unsubscribe,
        full_url: format!("{base}/d/7/2026-11-22/0123"),
        calendar: None,
    }
}

/// A shared rendering filled for a recipient is byte for byte what
/// rendering for that recipient alone gives, links with characters
/// HTML escapes included, with and without an unsubscribe link and
/// the "N more" line.
#[test]
fn a_filled_shared_rendering_is_the_recipients_own() {
    let names = |_: CollectionId| Cow::Borrowed("");
    let people = |_: PartyId| Cow::Borrowed("");
    for more in [0, 3] {
        for unsub in [
            None,
            Some("https://x.example/a&b/s/code/unsubscribe/7".to_string()),
        ] {
            let b = body(more);
            let f = frame(&names, &people, unsub.clone());
            let own = render_body(&b, &f, Parts::ALL).unwrap();
            let shared = render_shared(&b, &f, Parts::ALL, unsub.is_some()).unwrap();
            let links = Links {
                manage_url: &f.manage_url,
                unsubscribe_url: f.unsubscribe_url.as_deref(),
                full_url: &f.full_url,
            };
            let text = shared.text.as_deref().unwrap();
            let html = shared.html.as_deref().unwrap();
            let chat = shared.chat.as_deref().unwrap();
            assert!(text.contains(HOLE) && html.contains(HOLE) && chat.contains(HOLE));
            assert!(!text.contains("x.example") && !html.contains("x.example"));
            assert_eq!(Some(fill(text, &links, false)), own.text);
            assert_eq!(Some(fill(html, &links, true)), own.html);
            assert_eq!(Some(fill(chat, &links, false)), own.chat);
            assert!(own
                .html
                .unwrap()
                .contains("a&#38;b?c=&#39;d&#39;&#60;e&#62;"));
            assert_eq!(shared.sms, None);
        }
    }
}

/// An item with an address links there in every rendering that
/// carries links, escaped in HTML; an item without one has no link.
#[test]
fn an_items_url_is_its_link_and_no_url_is_no_link() {
    let names = |_: CollectionId| Cow::Borrowed("");
    let people = |_: PartyId| Cow::Borrowed("");
    let url = "https://wiki.example/p?a=1&b=%22x%22";
    let mut b = body(0);
    b.sections[0].lines[0] = b.sections[0].lines[0].clone().with_url(Some(url));
    let f = frame(&names, &people, None);
    let r = render_body(&b, &f, Parts::ALL).unwrap();
    let text = r.text.unwrap();
    assert!(text.contains(&format!("Dream from 3:00 PM to 4:00 PM\n    {url}\n")));
    let html = r.html.unwrap();
    assert!(
            html.contains(
                "href=\"https://wiki.example/p?a=1&#38;b=%22x%22\"><strong>Janitor&#39;s &#60;Pipe&#62; Dream</strong></a>"
            ),
            "{html}"
        );
    assert!(html.contains("<li>ann changed the start time of <strong>Budget sync</strong>"));
    let chat = r.chat.unwrap();
    assert!(chat.contains(&format!("4:00 PM {url}\n")), "{chat}");
    assert_eq!(text.matches("wiki.example").count(), 1);
    assert_eq!(chat.matches("wiki.example").count(), 1);
}

#[test]
fn the_code_hole_is_a_hole_that_fill_leaves_for_fill_code() {
    assert_eq!(CODE_HOLE, format!("{HOLE}{HOLE_CODE}"));
    let links = Links {
        manage_url: "https://d.example/s/\u{1}c",
        unsubscribe_url: Some("https://d.example/s/\u{1}c/unsubscribe/5"),
        full_url: "F",
    };
    let shared = format!("{HOLE}{HOLE_MANAGE} {HOLE}{HOLE_UNSUBSCRIBE}");
    let once = fill(&shared, &links, true);
    assert!(has_code_hole(&once));
    assert_eq!(
        fill_code(&once, "ab12"),
        "https://d.example/s/ab12 https://d.example/s/ab12/unsubscribe/5"
    );
}

#[test]
fn fill_leaves_what_is_not_a_hole() {
    let links = Links {
        manage_url: "M",
        unsubscribe_url: None,
        full_url: "F",
    };
    assert_eq!(fill("a\u{1}mb\u{1}fc\u{1}ud", &links, false), "aMbFcd");
    assert_eq!(fill("x\u{1}zy\u{1}", &links, false), "x\u{1}zy\u{1}");
    assert_eq!(fill("", &links, true), "");
}

#[test]
fn a_body_holding_the_hole_mark_is_seen() {
    let mut b = body(0);
    assert!(!b.has_holes());
    b.sections[0].lines[1] = Line::new("", "odd\u{1}m", "");
    assert!(b.has_holes());
}
