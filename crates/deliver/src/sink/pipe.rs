//! The `pipe` email transport: each message on the stdin of
//! `email.pipe_command` (split on spaces, never given to a shell), as
//! sendmail-compatible programs take it. Exit 0 is sent; 75
//! (EX_TEMPFAIL), a program that cannot start or is killed by a signal
//! are transient; any other exit is permanent.

use super::{Outcome, Outgoing};
use crate::listener::DeliveryError;

/// Why the command did not take a message.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The program could not be started (not found, not executable, no
    /// more processes).
    #[error("{program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    /// Waiting for the program, or reading its stderr, failed.
    #[error("{program}: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
    /// Exit 75 (EX_TEMPFAIL): the program asks for another attempt later.
    #[error("{program} exited 75 (try again later): {stderr}")]
    TempFail { program: String, stderr: String },
    /// Any other exit status, or exit 0 without having read the whole
    /// message: the program refused it.
    #[error("{program} exited {status}: {stderr}")]
    Exit {
        program: String,
        status: i32,
        stderr: String,
    },
    /// Killed by a signal (a timeout of its own, the OOM killer).
    #[error("{program} was killed by a signal")]
    Signal { program: String },
}

impl Error {
    /// Whether another attempt may succeed: a program that could not run,
    /// asked to be tried later or was killed says nothing about the
    /// message; one that exited otherwise refused it.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Error::Spawn { .. } | Error::Wait { .. } | Error::TempFail { .. } => true,
            Error::Signal { .. } => true,
            Error::Exit { .. } => false,
        }
    }
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        // The program's stderr may hold any bytes: one line, escaped.
        DeliveryError::verdict(e.is_transient(), None, &e.to_string(), None)
    }
}

/// Runs `cmd` with `m` on stdin, `{from}` in an argument replaced by the
/// envelope sender (the configured address, never the recipient: an
/// address may begin with `-`).
pub(super) fn pipe(cmd: &[String], m: &Outgoing) -> Outcome {
    match run(cmd, m) {
        Ok(()) => Outcome::sent(None, format!("{} exited 0", cmd[0])),
        Err(e) => Outcome::from(DeliveryError::from(e)),
    }
}

fn run(cmd: &[String], m: &Outgoing) -> Result<(), Error> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let program = cmd[0].clone();
    let mut child = Command::new(&cmd[0])
        .args(
            cmd[1..]
                .iter()
                .map(|a| a.replace("{from}", &m.envelope_from)),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| Error::Spawn {
            program: program.clone(),
            source,
        })?;
    let wrote = child
        .stdin
        .take()
        .map(|mut i| i.write_all(&m.bytes))
        .unwrap_or(Ok(()));
    let out = child.wait_with_output().map_err(|source| Error::Wait {
        program: program.clone(),
        source,
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    match out.status.code() {
        Some(0) if wrote.is_ok() => Ok(()),
        Some(75) => Err(Error::TempFail { program, stderr }),
        Some(status) => Err(Error::Exit {
            program,
            status,
            stderr,
        }),
        None => Err(Error::Signal { program }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(e: Error) -> (bool, String) {
        match DeliveryError::from(e) {
            DeliveryError::Transient {
                code: None,
                text,
                retry_after_secs: None,
            } => (true, text),
            DeliveryError::Permanent { code: None, text } => (false, text),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_failure_is_transient_or_permanent() {
        let p = || "sendmail".to_string();
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let cases = [
            (
                Error::Spawn {
                    program: p(),
                    source: io(),
                },
                true,
            ),
            (
                Error::Wait {
                    program: p(),
                    source: io(),
                },
                true,
            ),
            (
                Error::TempFail {
                    program: p(),
                    stderr: "busy".into(),
                },
                true,
            ),
            (Error::Signal { program: p() }, true),
            (
                Error::Exit {
                    program: p(),
                    status: 1,
                    stderr: "no".into(),
                },
                false,
            ),
            (
                Error::Exit {
                    program: p(),
                    status: 0,
                    stderr: String::new(),
                },
                false,
            ),
            (
                Error::Exit {
                    program: p(),
                    status: -1,
                    stderr: String::new(),
                },
                false,
            ),
            (
                Error::Exit {
                    program: p(),
                    status: 255,
                    stderr: String::new(),
                },
                false,
            ),
        ];
        for (e, transient) in cases {
            let shown = e.to_string();
            let (got, text) = verdict(e);
            assert_eq!(got, transient, "{text}");
            assert_eq!(text, shown, "a plain text is kept as it is");
        }
    }

    #[test]
    fn the_texts_are_the_ones_the_queue_has_always_shown() {
        let (_, text) = verdict(Error::TempFail {
            program: "sendmail".into(),
            stderr: "queue full".into(),
        });
        assert_eq!(text, "sendmail exited 75 (try again later): queue full");
        let (_, text) = verdict(Error::Exit {
            program: "sendmail".into(),
            status: 67,
            stderr: String::new(),
        });
        assert_eq!(text, "sendmail exited 67: ");
    }

    #[test]
    fn a_hostile_stderr_is_one_escaped_line() {
        let (transient, text) = verdict(Error::Exit {
            program: "sendmail".into(),
            status: 1,
            stderr: "no\r\nX-Injected: 1\u{1b}[2J\u{202e}".into(),
        });
        assert!(!transient);
        assert!(!text.contains(['\r', '\n', '\u{1b}', '\u{202e}']), "{text}");
        assert!(text.starts_with("sendmail exited 1: no"), "{text}");
    }

    #[test]
    fn a_real_program_maps_to_its_verdict() {
        let m = Outgoing::text("a@example.com", "hi", Default::default());
        let run_sh = |script: &str| {
            let cmd = ["sh", "-c", script].map(String::from);
            pipe(&cmd, &m)
        };
        assert!(matches!(run_sh("cat >/dev/null"), Outcome::Sent { .. }));
        assert!(matches!(
            run_sh("cat >/dev/null; echo later >&2; exit 75"),
            Outcome::Transient { .. }
        ));
        assert!(matches!(
            run_sh("cat >/dev/null; exit 1"),
            Outcome::Permanent { .. }
        ));
        assert!(matches!(run_sh("kill -9 $$"), Outcome::Transient { .. }));
        let missing = ["/nonexistent/digestd-no-such-program".to_string()];
        assert!(matches!(pipe(&missing, &m), Outcome::Transient { .. }));
    }
}
