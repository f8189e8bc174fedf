//! `serve` delivering by SMTP, XMPP and a webhook, and posting the
//! operators' events, in one process runs on one tokio runtime: the
//! listeners and the events poster get its handle and build no runtime of
//! their own. Counted from outside, on the real binary: every tokio
//! runtime's I/O driver is one epoll instance with its own waker, an
//! eventfd, in it (its descriptor may be duplicated, the waker is not),
//! so the eventfds registered in the process's epoll descriptors count
//! its runtimes (a blocking reqwest client would add one each).

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::cli::Env;
use crate::common::http::Gateway;
use crate::common::prosody::{Prosody, Reader};
use crate::common::smtp::FaultSmtp;

const WAIT: Duration = Duration::from_secs(30);

/// The runtimes of `pid`: the eventfds its epoll instances watch.
fn runtimes(pid: u32) -> usize {
    let link = |fd: &str| {
        std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
            .map(|l| l.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut wakers = BTreeSet::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap() {
        let fd = e.unwrap().file_name().to_string_lossy().into_owned();
        if link(&fd) != "anon_inode:[eventpoll]" {
            continue;
        }
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap();
        for watched in info.lines().filter_map(|l| l.strip_prefix("tfd:")) {
            let target = watched.split_whitespace().next().unwrap().to_string();
            if link(&target) == "anon_inode:[eventfd]" {
                wakers.insert(target);
            }
        }
    }
    wakers.len()
}

/// The names of `pid`'s threads, for the failure message.
fn threads(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect();
    names.sort();
    names
}

/// `digestd serve` on `env`'s config and database, its log in `serve.log`.
fn serve(env: &Env) -> Child {
    let log = std::fs::File::create(env.dir.path().join("serve.log")).unwrap();
    env.command_in(&["serve"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

#[test]
fn serve_delivering_by_every_kind_of_listener_runs_one_runtime() {
    let Some(p) = Prosody::start(&[("digestd", "servicepw"), ("bob", "bobpw")]) else {
        return;
    };
    let smtp = FaultSmtp::start();
    let (hook, events) = (Gateway::start(vec![]), Gateway::start(vec![]));
    let env = Env::init();
    std::fs::write(
        &env.config,
        format!(
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"{}\"\nfrom = \"digests@example.org\"\n\
             [xmpp]\ntransport = \"xmpp\"\njid = \"digestd@localhost\"\npassword = \"servicepw\"\n\
             server = \"{}\"\ntls = false\ntimeout_seconds = 5\n\
             [webhook]\ntransport = \"http\"\nallow_http = true\nallow_private = true\n\
             [events]\nurl = \"{}\"\nsecret = \"whsec_{}\"\n\
             [schedule]\nqueue_seconds = 1\n[http]\nenabled = false\n",
            smtp.url(),
            p.server(),
            events.url(),
            // The base64 of 24 zero bytes: a valid secret.
            "A".repeat(32),
        ),
    )
    .unwrap();
    env.add_user(
        "amy",
        &["--email", "ok-amy@example.com", "--xmpp", "bob@localhost"],
    );
    env.ok(&[
        "contact",
        "amy",
        "--channel",
        "webhook",
        "--set",
        &hook.url(),
    ]);
    let mut bob = Reader::login(&p, "bob", "bobpw");
    let mut child = serve(&env);
    let pid = child.id();
    let log = || std::fs::read_to_string(env.dir.path().join("serve.log")).unwrap_or_default();
    // Several passes, each sending by the three listeners (an SMTP
    // session, the XMPP session kept from one pass to the next, the
    // webhook's kept client).
    for round in 1..=3 {
        let subject = format!("round {round}");
        env.ok(&[
            "notify",
            "--from",
            "amy",
            "--to",
            "amy",
            "--subject",
            &subject,
            "--message",
            "m",
            "--channel",
            "email,xmpp,webhook",
        ]);
        let until = Instant::now() + WAIT;
        while smtp.received().len() < round || hook.requests().len() < round {
            assert!(Instant::now() < until, "round {round}: no email\n{}", log());
            assert!(
                child.try_wait().unwrap().is_none(),
                "serve ended\n{}",
                log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let got = bob.bodies(1, WAIT);
        assert_eq!(got.len(), 1, "round {round}: {got:?}\n{}", log());
        assert!(got[0].contains(&subject), "{got:?}");
    }
    let (n, names) = (runtimes(pid), threads(pid));
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let until = Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < until,
            "serve did not end on SIGTERM\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(n, 1, "tokio runtimes in serve; its threads: {names:?}");
    assert!(child.wait().unwrap().success(), "{}", log());
}
