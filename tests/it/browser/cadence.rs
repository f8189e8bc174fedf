//! "Send it now" and "How often and where" on the manage page in the
//! browser: from the manage link of a real digest, asha sends what is
//! waiting now (one email, through the real queue; pressed again, nothing
//! waits), makes the Rota weekly on Tuesdays at 07:00 with the form (the
//! next tick sends it then, with only what came after the flush), and a
//! refused form (no channel, a weekday the select never offered) shows
//! one line and writes nothing.

use digestd::subscriptions;

use super::common::at;
use super::common::browser::{Browser, Options};
use super::common::pages::snapshot;
use super::common::web::Web;
use super::{edit, in_browser, one_digest, PostOffice};

fn send_now_and_cadence(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = super::asha(&mut c);
    let id = a.daily.0;
    let mut po = PostOffice::new(web);
    edit(&mut c, &a, 1, "2026-11-22T10:00:00Z");
    let m = one_digest(&mut po, &mut c, "2026-11-23T08:00:00Z", 1);
    edit(&mut c, &a, 2, "2026-11-23T10:00:00Z");
    web.clock.set(at("2026-11-23T12:00:00Z"));
    b.open(super::on_server(web, &m.manage));

    // Send it now: one digest, through the queue, with what waits.
    b.press(&format!("#flush-{id}"));
    assert!(b.url().ends_with("?done=flushed"), "{}", b.url());
    assert!(b.text().contains("Sent: the digest is on its way."));
    let sent = one_digest(&mut po, &mut c, "2026-11-23T12:00:00Z", 2);
    assert!(!sent.text.contains("Shift 1"), "{}", sent.text);
    assert_eq!(sent.subject, m.subject, "the same thread");
    b.shot("manage-flushed");
    b.press(&format!("#flush-{id}"));
    assert!(b.url().ends_with("?done=nothing"), "{}", b.url());
    assert!(b.text().contains("Nothing is waiting: nothing was sent."));
    assert!(po.run(&mut c, "2026-11-23T12:00:00Z").is_empty());

    // How often and where: weekly on Tuesdays at 07:00.
    b.click(&format!("#cadence-{id} summary"));
    b.choose(&format!("#frequency-{id}"), "weekly");
    b.choose(&format!("#cadence-hour-{id}"), "7");
    b.choose(&format!("#day-{id}"), "tue");
    b.shot("manage-cadence");
    b.press(&format!("#cadence-{id} button[type=submit]"));
    assert!(b.url().ends_with("?done=cadence"), "{}", b.url());
    let t = b.text();
    assert!(t.contains("Weekly on Tuesday at 07:00"), "{t}");
    let s = subscriptions::get(&mut c, a.daily).unwrap();
    assert_eq!(
        (s.frequency.as_str(), s.hour_of_day, s.day_of_week),
        ("weekly", Some(7), Some(1))
    );

    // Refused: no channel ticked; a weekday no option offered.
    let before = snapshot(&mut c);
    b.click(&format!("#cadence-{id} summary"));
    b.click(&format!("#ch-{id}-email"));
    b.press(&format!("#cadence-{id} button[type=submit]"));
    let err = b.text_of("p.error");
    assert!(err.contains("choose at least one way"), "{err}");
    b.execute(&format!(
        "document.querySelector('#day-{id}').options[0].value = 'Funday'"
    ));
    b.click(&format!("#cadence-{id} summary"));
    b.choose(&format!("#day-{id}"), "Funday");
    b.press(&format!("#cadence-{id} button[type=submit]"));
    assert!(b.text_of("p.error").contains("Funday"), "{}", b.text());
    assert_eq!(snapshot(&mut c), before);

    // The next digest: Tuesday 07:00 in Madrid, only what came after.
    edit(&mut c, &a, 3, "2026-11-24T05:00:00Z");
    assert!(po.run(&mut c, "2026-11-24T05:30:00Z").is_empty());
    let next = one_digest(&mut po, &mut c, "2026-11-24T06:00:00Z", 3);
    assert!(!next.text.contains("Shift 2"), "{}", next.text);
}

#[test]
fn send_it_now_and_how_often_work_in_a_browser() {
    in_browser(Options::default(), send_now_and_cadence);
}
