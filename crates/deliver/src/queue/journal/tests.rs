//! Unit tests of `journal`.

use super::*;

fn accepted(code: u16) -> Delivered {
    Delivered {
        code: Some(code),
        text: "ok".into(),
        remote_id: Some("id 1".into()),
    }
}

#[test]
fn lines_are_read_back_and_a_line_cut_short_or_garbled_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::open(dir.path(), "00aa", None).unwrap();
    j.note(&[(1000, 7, "email".into())], &accepted(250));
    j.note(
        &[(1001, 8, "sms".into()), (1002, 8, "sms".into())],
        &accepted(201),
    );
    // What a crash in the middle of a write, or a stray file, leaves.
    {
        let mut f = OpenOptions::new().append(true).open(&j.path).unwrap();
        f.write_all(b"not json\n\xff\xfe\n{\"code\":250,\"rem")
            .unwrap();
    }
    let got = j.entries().unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].rows, vec![(1000, 7, "email".to_string())]);
    assert_eq!(got[1].code, Some(201));
    assert_eq!(got[1].remote_id.as_deref(), Some("id 1"));
    j.clear().unwrap();
    assert!(j.entries().unwrap().is_empty());
}

#[test]
fn only_this_databases_journals_and_the_old_releases_are_read() {
    let p = |n: &str| PathBuf::from("/j").join(n);
    let tag = Some("00aa11bb22cc33dd");
    assert!(is_journal(
        &p("00aa11bb22cc33dd-41-00ff00ff00ff00ff.sent"),
        tag
    ));
    // Another database's, in a shared directory.
    assert!(!is_journal(
        &p("99aa11bb22cc33dd-41-00ff00ff00ff00ff.sent"),
        tag
    ));
    // The release before's, read only as such.
    assert!(!is_journal(&p("41-00ff00ff00ff00ff.sent"), tag));
    assert!(is_journal(&p("41-00ff00ff00ff00ff.sent"), None));
    assert!(!is_journal(
        &p("00aa11bb22cc33dd-41-00ff00ff00ff00ff.sent"),
        None
    ));
    for other in [
        ".probe-41-00ff",
        "notes.txt",
        "41-00ff.sent.tmp",
        "00aa11bb22cc33dd-41",
    ] {
        assert!(
            !is_journal(&p(other), tag) && !is_journal(&p(other), None),
            "{other}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::open(dir.path(), "00aa11bb22cc33dd", None).unwrap();
    assert!(is_journal(&j.path, tag));
}

#[test]
fn a_journal_directory_that_cannot_be_made_is_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let e = check_dir(&file.join("journal")).unwrap_err();
    assert!(matches!(e, Error::Invalid(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.starts_with("config: queue.journal_dir "), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let ok = dir.path().join("a/b/journal");
    check_dir(&ok).unwrap();
    // Made, and left empty.
    assert_eq!(std::fs::read_dir(&ok).unwrap().count(), 0);
}

#[test]
fn a_probe_left_by_a_killed_process_is_swept_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    // What a kill -9 between the probe's create and its remove leaves.
    let stale = dir.path().join(".probe-4242-00ff00ff00ff00ff");
    std::fs::write(&stale, "").unwrap();
    let journal = dir.path().join("00aa11bb22cc33dd-41-00ff00ff00ff00ff.sent");
    std::fs::write(&journal, "{}\n").unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "x").unwrap();
    let probe_dir = dir.path().join(".probe-dir");
    std::fs::create_dir(&probe_dir).unwrap();
    check_dir(dir.path()).unwrap();
    assert!(!stale.exists());
    assert!(journal.exists() && notes.exists() && probe_dir.exists());
}

#[test]
fn a_live_journal_is_locked_and_an_empty_one_goes_with_its_process() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::open(dir.path(), "00aa", None).unwrap();
    // Another open of a live journal cannot take its lock.
    let other = File::open(&j.path).unwrap();
    assert!(other.try_lock().is_err());
    drop(other);
    let path = j.path.clone();
    drop(j);
    assert!(!path.exists(), "an empty journal is removed");
}
