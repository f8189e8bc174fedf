//! The harness itself: a PostgreSQL run that CI asks for cannot pass
//! without PostgreSQL. A back-end test's PostgreSQL half is run alone in
//! a child process of this binary (`common::alone`) with the variables
//! set as a developer's machine or CI would set them.

use crate::common;

/// The PostgreSQL half of an ordinary back-end test.
const PG_TEST: (&str, &str) = ("it::storage_parties::postgres", "users_roundtrip");

/// Runs [`PG_TEST`] alone with `url` as `DIGESTD_TEST_DATABASE_URL` and
/// `required` as `DIGESTD_TEST_POSTGRES`; whether it passed, and its output.
fn pg_test(url: Option<&str>, required: Option<&str>) -> (bool, String) {
    let out = common::alone::run(
        PG_TEST.0,
        PG_TEST.1,
        &[
            ("DIGESTD_TEST_DATABASE_URL", url),
            ("DIGESTD_TEST_POSTGRES", required),
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("1 passed") || text.contains("1 failed"),
        "{text}"
    );
    (out.status.success(), text)
}

#[test]
fn without_a_database_url_postgres_tests_skip_unless_required() {
    let (passed, text) = pg_test(None, None);
    assert!(passed, "{text}");
    assert!(
        text.contains("skipped: DIGESTD_TEST_DATABASE_URL is not set"),
        "{text}"
    );

    let (passed, text) = pg_test(None, Some("required"));
    assert!(
        !passed,
        "a required PostgreSQL run passed without one:\n{text}"
    );
    assert!(
        text.contains("DIGESTD_TEST_POSTGRES=required but DIGESTD_TEST_DATABASE_URL is not set"),
        "{text}"
    );
}

#[test]
fn an_unreachable_postgres_fails_the_test() {
    for required in [None, Some("required")] {
        let (passed, text) = pg_test(Some("postgres://root@127.0.0.1:1/test"), required);
        assert!(!passed, "{required:?}: passed without PostgreSQL:\n{text}");
        assert!(
            text.contains("DIGESTD_TEST_DATABASE_URL is set but PostgreSQL is unreachable"),
            "{text}"
        );
    }
}
