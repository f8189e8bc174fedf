//! No database is created by accident: only `init` makes one, and every
//! other command on a database that is not there (an SQLite file that
//! does not exist, a PostgreSQL database without digestd's tables) says
//! where it looked and to run `digestd init` or pass --db (exit 2). A
//! database that cannot be opened is one line and exit 2 too.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use super::common::TestDb;
use super::{digestd_in, refusal};

/// The commands checked, each of which needs the database; `serve` and
/// `web` listen on a port the kernel picks, should they get that far.
const COMMANDS: &[&[&str]] = &[
    &["user", "list"],
    &["tick"],
    &["queue", "run"],
    &["serve"],
    &["web"],
];

fn run(dir: &Path, db: Option<&str>, args: &[&str]) -> Output {
    let mut all = vec!["--config", "digestd.toml"];
    if let Some(db) = db {
        all.extend(["--db", db]);
    }
    all.extend(args);
    digestd_in(
        dir,
        &all,
        &[("DIGESTD_HTTP__LISTEN", OsStr::new("127.0.0.1:0"))],
    )
}

fn fresh() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("digestd.toml"), "").unwrap();
    dir
}

/// What is in `dir`, by name.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn only_init_creates_an_sqlite_database() {
    let dir = fresh();
    let d = dir.path();
    let abs = d.canonicalize().unwrap();
    for args in COMMANDS {
        let line = refusal(&run(d, None, args), &format!("{args:?}"));
        assert_eq!(
            line,
            format!(
                "no database at {}/data/digestd.db (sqlite://data/digestd.db): run `digestd init` to create it, or pass --db with the database to use",
                abs.display()
            ),
            "{args:?}"
        );
        let line = refusal(&run(d, Some("sqlite://other.db"), args), "--db");
        assert!(
            line.starts_with(&format!("no database at {}/other.db ", abs.display())),
            "{line}"
        );
        assert_eq!(entries(d), ["digestd.toml"], "{args:?} created nothing");
    }
    let out = run(d, None, &["init"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "database ready: sqlite://data/digestd.db\n",
        "{out:?}"
    );
    let out = run(d, None, &["user", "list"]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    // An empty file is no digestd database either.
    std::fs::write(d.join("empty.db"), "").unwrap();
    let line = refusal(
        &run(d, Some("sqlite://empty.db"), &["user", "list"]),
        "empty",
    );
    assert_eq!(
        line,
        "sqlite://empty.db has no digestd tables: run `digestd init` to create them, or pass --db with the database to use"
    );
    assert_eq!(std::fs::metadata(d.join("empty.db")).unwrap().len(), 0);
}

#[test]
fn only_init_creates_digestd_tables_in_postgres() {
    let Some(db) = TestDb::postgres() else {
        eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set");
        return;
    };
    let dir = fresh();
    let shown = db.url.clone();
    for args in COMMANDS {
        let line = refusal(&run(dir.path(), Some(&db.url), args), &format!("{args:?}"));
        assert_eq!(
            line,
            format!("{shown} has no digestd tables: run `digestd init` to create them, or pass --db with the database to use"),
            "{args:?}"
        );
    }
    let mut c = digestd::db::DbUrl::parse(&db.url)
        .unwrap()
        .connect()
        .unwrap();
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let tables = |c: &mut digestd::db::DbConn| {
        let digestd::db::DbConn::Postgres(pg) = c else {
            unreachable!()
        };
        diesel::sql_query(
            "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema()",
        )
        .get_result::<N>(pg)
        .unwrap()
        .n
    };
    assert_eq!(tables(&mut c), 0, "the refused commands made no table");
    let out = run(dir.path(), Some(&db.url), &["init"]);
    assert!(out.status.success(), "{out:?}");
    assert!(tables(&mut c) > 10);
    let out = run(dir.path(), Some(&db.url), &["user", "list"]);
    assert!(out.status.success(), "{out:?}");
}

/// A database that cannot be opened: a path under a directory that is not
/// there, a file that is not SQLite, a server nobody answers for. One
/// line, exit 2, for the daemons and an ordinary command alike.
#[test]
fn a_database_that_cannot_be_opened_is_one_line_and_exit_2() {
    let dir = fresh();
    let d = dir.path();
    std::fs::write(d.join("notes.db"), "these are notes, not a database\n").unwrap();
    std::fs::write(d.join("plain"), "").unwrap();
    let abs = d.canonicalize().unwrap();
    let cases: &[(&str, String)] = &[
        (
            "sqlite://missing/dir/x.db",
            format!("no database at {}/missing/dir/x.db (sqlite://missing/dir/x.db): run `digestd init`", abs.display()),
        ),
        (
            "sqlite://notes.db",
            "cannot open the database sqlite://notes.db: file is not a database".into(),
        ),
        (
            "postgres://root:s3cret@127.0.0.1:1/x",
            "cannot open the database postgres://root:***@127.0.0.1:1/x: connection to server at \"127.0.0.1\", port 1 failed: ".into(),
        ),
    ];
    for (url, want) in cases {
        for args in COMMANDS {
            let line = refusal(&run(d, Some(url), args), &format!("{url} {args:?}"));
            assert!(line.starts_with(want.as_str()), "{url} {args:?}: {line}");
            assert!(!line.contains("s3cret"), "{line}");
        }
    }
    // `init` makes what is missing, but not what it cannot.
    for (url, want) in [
        (
            "sqlite://notes.db",
            "cannot open the database sqlite://notes.db: file is not a database",
        ),
        (
            "sqlite://plain/x.db",
            "cannot open the database sqlite://plain/x.db: cannot create plain: ",
        ),
        (
            "postgres://root@127.0.0.1:1/x",
            "cannot open the database postgres://root@127.0.0.1:1/x: ",
        ),
    ] {
        let line = refusal(&run(d, Some(url), &["init"]), url);
        assert!(line.starts_with(want), "{url}: {line}");
    }
    assert_eq!(entries(d), ["digestd.toml", "notes.db", "plain"]);
    assert_eq!(
        std::fs::read_to_string(d.join("notes.db")).unwrap(),
        "these are notes, not a database\n"
    );
}
