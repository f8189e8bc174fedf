//! A real Synapse on loopback, for `bench matrix` and the Matrix tests
//! (`tests/it/common/synapse.rs` starts it through here): a configuration
//! made by Synapse itself in a directory of its own, with an overlay (a
//! free loopback port, client API only, no key servers, rate limits out of
//! the way), users registered with the shared secret. Synapse is the venv
//! at `/opt/synapse`, or the one `DIGESTD_SYNAPSE` names.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::free_port;
use crate::error::{Error, Result};

/// The venv Synapse runs from.
pub fn venv() -> PathBuf {
    PathBuf::from(std::env::var("DIGESTD_SYNAPSE").unwrap_or_else(|_| "/opt/synapse".into()))
}

/// Whether the venv holds Synapse and its registration tool.
pub fn installed(venv: &Path) -> bool {
    venv.join("bin/python").exists() && venv.join("bin/register_new_matrix_user").exists()
}

/// The overlay on Synapse's own configuration (later files win).
fn overlay(port: u16) -> String {
    let lots = "{per_second: 100000, burst_count: 100000}";
    format!(
        "listeners:\n  - port: {port}\n    bind_addresses: ['127.0.0.1']\n    type: http\n    \
         tls: false\n    x_forwarded: false\n    resources:\n      - names: [client]\n        \
         compress: false\n\
         trusted_key_servers: []\nsuppress_key_server_warning: true\n\
         rc_message: {lots}\nrc_registration: {lots}\nrc_room_creation: {lots}\n\
         rc_login:\n  address: {lots}\n  account: {lots}\n  failed_attempts: {lots}\n\
         rc_joins:\n  local: {lots}\n  remote: {lots}\n\
         rc_invites:\n  per_room: {lots}\n  per_user: {lots}\n  per_issuer: {lots}\n"
    )
}

fn failed(what: &str, out: &std::process::Output) -> Error {
    Error::Storage(format!(
        "{what}: {} {}",
        String::from_utf8_lossy(&out.stdout).trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

/// A running Synapse for server name `localhost`, killed (and its
/// directory removed) on drop.
pub struct Synapse {
    dir: PathBuf,
    venv: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

impl Synapse {
    /// Synapse with `users` (name, password) registered, running.
    pub fn start(users: &[(&str, &str)]) -> Result<Synapse> {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let venv = venv();
        if !installed(&venv) {
            return Err(Error::invalid(format!(
                "Synapse is not installed in {} (set DIGESTD_SYNAPSE to its venv)",
                venv.display()
            )));
        }
        let dir = std::env::temp_dir().join(format!(
            "digestd-synapse-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        // Owned from here: a failure below removes the directory.
        let mut s = Synapse {
            dir,
            venv,
            port,
            child: None,
        };
        let out = Command::new(s.venv.join("bin/python"))
            .args(["-m", "synapse.app.homeserver", "--server-name", "localhost"])
            .args(["--config-path", "hs.yaml", "--generate-config"])
            .arg("--report-stats=no")
            .current_dir(&s.dir)
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(failed("synapse --generate-config", &out));
        }
        std::fs::write(s.dir.join("overlay.yaml"), overlay(port))?;
        s.up()?;
        for (name, pw) in users {
            s.register(name, pw)?;
        }
        Ok(s)
    }

    /// Starts the server and waits until it answers, at most a minute.
    fn up(&mut self) -> Result<()> {
        let log = std::fs::File::create(self.dir.join("stdout.log"))?;
        let child = Command::new(self.venv.join("bin/python"))
            .args(["-m", "synapse.app.homeserver"])
            .args(["-c", "hs.yaml", "-c", "overlay.yaml"])
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(60);
        let versions = format!("{}/_matrix/client/versions", self.url());
        while reqwest::blocking::get(&versions).map_or(true, |r| !r.status().is_success()) {
            if Instant::now() > until {
                return Err(Error::Storage(format!(
                    "synapse did not answer on {}: {}",
                    self.port,
                    self.log()
                )));
            }
            if let Some(Ok(Some(st))) = self.child.as_mut().map(|c| c.try_wait()) {
                return Err(Error::Storage(format!(
                    "synapse exited ({st}): {}",
                    self.log()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// Registers a user (not an admin) with the shared secret.
    pub fn register(&self, name: &str, password: &str) -> Result<()> {
        let out = Command::new(self.venv.join("bin/register_new_matrix_user"))
            .args(["-c", "hs.yaml", "-u", name, "-p", password, "--no-admin"])
            .arg(self.url())
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(failed("register_new_matrix_user", &out));
        }
        Ok(())
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// What the server wrote: its output and its log file.
    pub fn log(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        format!("{}{}", read("stdout.log"), read("homeserver.log"))
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
