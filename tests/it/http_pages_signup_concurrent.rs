//! The sign-up limits hold against many sign-ups at once, on each back
//! end: threads on their own connections, released together, all to one
//! address and then all from one client; exactly the limit's number get
//! through. The sign-up page itself is `http_pages_signup.rs`.

use crate::common;

use common::at;
use common::pages::NOW;
use common::signup::{counts, setup};
use common::TestDb;
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::DbConn;
use digestd::i18n::Locale;

/// The limits hold against sign-ups that arrive at once: `threads`
/// submissions, each on its own connection and released together by a
/// barrier, all to one address (from as many clients) and then all from
/// one client (to as many addresses). Exactly the limit's number get a
/// pending row and a verification message; the rest are `Limited`. On
/// PostgreSQL, without the advisory locks in `signup::request`, each count
/// saw the others' rows uncommitted and more passed.
fn concurrent_sign_ups(db: &TestDb) {
    use digestd::signup::{self, Requested, SignupInput};
    use std::sync::{Arc, Barrier};
    const THREADS: usize = 24;
    const LIMIT: u32 = 3;
    let mut c = db.conn();
    let (cal, _) = setup(&mut c);
    let email = EmailConfig::default();
    // One round: the `i`th submission's address and client.
    let round = |cfg: digestd::config::SignupConfig,
                 who: &(dyn Fn(usize) -> (String, String) + Sync)|
     -> usize {
        let mut conns: Vec<DbConn> = (0..THREADS)
            .map(|_| {
                digestd::db::DbUrl::parse(&db.url)
                    .unwrap()
                    .connect()
                    .unwrap()
            })
            .collect();
        let gate = Arc::new(Barrier::new(THREADS));
        std::thread::scope(|s| {
            let hands: Vec<_> = conns
                .iter_mut()
                .enumerate()
                .map(|(i, conn)| {
                    let (gate, cfg, email, cal) = (gate.clone(), &cfg, &email, &cal);
                    s.spawn(move || {
                        let (address, client) = who(i);
                        let input = SignupInput {
                            email: address,
                            collections: vec![cal.clone()],
                            frequency: "daily".into(),
                            hour: "9".into(),
                            day: String::new(),
                            timezone: "Europe/Berlin".into(),
                        };
                        let v = signup::validate_input(conn, &input, Locale::En).unwrap();
                        gate.wait();
                        signup::request(conn, cfg, email, "http://x", &v, &client, at(NOW)).unwrap()
                    })
                })
                .collect();
            hands
                .into_iter()
                .map(|h| h.join().unwrap())
                .filter(|r| *r == Requested::Sent)
                .count()
        })
    };
    let signups_for = |c: &mut DbConn, col: &str, v: &str| -> i64 {
        use digestd::db::schema::signups;
        let q = signups::table.count();
        match col {
            "email" => q.filter(signups::email.eq(v)).get_result(c).unwrap(),
            _ => q.filter(signups::client.eq(v)).get_result(c).unwrap(),
        }
    };
    for r in 0..3 {
        // One address, many clients.
        let address = format!("race{r}@example.net");
        let before = counts(&mut c);
        let sent = round(
            digestd::config::SignupConfig {
                per_client_per_hour: 1000,
                per_address_per_day: LIMIT,
                ..Default::default()
            },
            &|i| (address.clone(), format!("10.{r}.0.{i}")),
        );
        let n = LIMIT as usize;
        assert_eq!(sent, n, "round {r}: sign-ups let through to one address");
        assert_eq!(signups_for(&mut c, "email", &address), n as i64);
        let after = counts(&mut c);
        assert_eq!(
            (after.0 - before.0, after.1 - before.1),
            (n as i64, n as i64)
        );
        assert_eq!(after.2, before.2, "no user before a confirm");
        // One client, many addresses.
        // One /24 per round: a client counts as its block.
        let client = format!("192.0.{r}.2");
        let before = counts(&mut c);
        let sent = round(
            digestd::config::SignupConfig {
                per_client_per_hour: LIMIT,
                per_address_per_day: 1000,
                ..Default::default()
            },
            &|i| (format!("c{r}-{i}@example.net"), client.clone()),
        );
        assert_eq!(sent, n, "round {r}: sign-ups let through from one client");
        assert_eq!(signups_for(&mut c, "client", &client), n as i64);
        let after = counts(&mut c);
        assert_eq!(
            (after.0 - before.0, after.1 - before.1),
            (n as i64, n as i64)
        );
    }
}

#[test]
fn concurrent_sign_ups_stay_within_the_limits_sqlite() {
    concurrent_sign_ups(&TestDb::sqlite());
}

#[test]
fn concurrent_sign_ups_stay_within_the_limits_postgres() {
    match TestDb::postgres() {
        Some(db) => concurrent_sign_ups(&db),
        None => eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set"),
    }
}
