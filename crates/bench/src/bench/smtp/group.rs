//! The group path of `bench smtp`: one group of all the recipients,
//! `digestd notify --expand-group` and `digestd queue run` as processes of
//! this binary, and how many members a run's request reached.

use std::io::Write;
use std::process::{Command, Stdio};

use super::SmtpArgs;
use crate::bench::{requested_at, PARTY0};
use crate::error::{Error, Result};

/// The group `bench-group` holding the `n` recipients.
pub(super) fn group_of_all(c: &mut crate::db::DbConn, n: usize) -> Result<()> {
    use diesel::connection::SimpleConnection;
    let d = crate::bench::sql::Dialect(c.backend());
    let t0 = d.ts_lit(requested_at());
    let all = d.series(n + 1);
    let group = PARTY0 + n as i64 + 1;
    c.batch_execute(&format!(
        "INSERT INTO parties (id, kind, name, created_at) VALUES ({group}, 'group', 'bench-group', {t0}); \
         INSERT INTO memberships (group_id, member_id) \
             SELECT {group}, {} + i FROM {all} WHERE i > 0",
        PARTY0
    ))?;
    Ok(())
}

/// One timed run of the group path: `digestd notify` to the group, then
/// `digestd queue run`, each a process of this binary on the bench's
/// database, sending over SMTP into the sink on `port`.
pub(super) fn as_processes(
    db_url: &str,
    port: u16,
    a: &SmtpArgs,
    k: usize,
    body: &str,
) -> Result<()> {
    let exe = std::env::current_exe()?;
    let run = |args: &[&str], stdin: Option<&str>| -> Result<()> {
        let mut cmd = Command::new(&exe);
        cmd.arg("--db")
            .arg(db_url)
            .args(args)
            .env("DIGESTD_EMAIL__TRANSPORT", "smtp")
            .env(
                "DIGESTD_EMAIL__SMTP_URL",
                format!("smtp://127.0.0.1:{port}"),
            )
            .env("DIGESTD_EMAIL__POOL_SIZE", a.sessions.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .expect("piped")
                .write_all(text.as_bytes())?;
        }
        let done = child.wait_with_output()?;
        if !done.status.success() {
            return Err(Error::Storage(format!(
                "digestd {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&done.stderr).trim()
            )));
        }
        Ok(())
    };
    let subject = format!("Bench group message {k}");
    run(
        &[
            "notify",
            "--from",
            "u0",
            "--to",
            "bench-group",
            "--expand-group",
            "--subject",
            &subject,
            "--message",
            "-",
        ],
        Some(body),
    )?;
    run(&["queue", "run"], None)
}

/// How many members the `k`th run's group request reached.
pub(super) fn sent_to_group(c: &mut crate::db::DbConn, k: usize) -> Result<usize> {
    use crate::db::schema::{nt_queue, nt_requests};
    use diesel::prelude::*;
    let subject = format!("Bench group message {k}");
    let n: i64 = nt_queue::table
        .inner_join(nt_requests::table.on(nt_requests::request_id.eq(nt_queue::request_id)))
        .filter(nt_requests::subject.eq(&subject))
        .filter(nt_queue::is_successful.eq(true))
        .count()
        .get_result(c)?;
    Ok(n as usize)
}
