//! Unit tests of `server`.

use super::*;

#[test]
fn failing_accepts_back_off_to_a_second_and_start_over() {
    let mut errors = AcceptErrors::default();
    let e = std::io::Error::other("EMFILE");
    let pauses: Vec<u128> = (0..10).map(|_| errors.failed(&e).as_millis()).collect();
    assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
    errors.reset();
    assert_eq!(errors.failed(&e), Duration::from_millis(10));
}

#[test]
fn a_shed_connection_closes_at_once_unless_a_request_is_answered() {
    let limits = Limits {
        max_connections: 1,
        header_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(60),
    };
    let w = Watch::new();
    assert_eq!(w.waiting_since(), Some(w.opened), "waiting since it opened");
    w.request_started();
    assert_eq!(w.waiting_since(), None, "answering: never shed");
    w.shed();
    assert_eq!(w.deadline(limits), None, "the answer goes out first");
    w.request_done();
    assert_eq!(w.deadline(limits), Some(w.opened), "then it closes");
    assert_eq!(w.waiting_since(), None, "and is not shed twice");
}

#[test]
fn a_connection_is_timed_by_what_it_waits_for() {
    let limits = Limits {
        max_connections: 1,
        header_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(60),
    };
    let w = Watch::new();
    let secs = |at: Option<Instant>| at.map(|t| (t - w.opened).as_secs());
    // A new connection's first head: from connecting.
    assert_eq!(secs(w.deadline(limits)), Some(10));
    w.read_some();
    assert_eq!(secs(w.deadline(limits)), Some(10));
    // Being answered: no deadline; bytes read meanwhile are the body.
    w.request_started();
    assert_eq!(w.deadline(limits), None);
    w.read_some();
    assert_eq!(w.deadline(limits), None);
    // Answered: the idle wait, until a byte of the next head comes.
    w.request_done();
    assert_eq!(secs(w.deadline(limits)), Some(60));
    w.read_some();
    assert_eq!(secs(w.deadline(limits)), Some(10));
}
