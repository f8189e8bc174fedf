//! `[branding]` in the pages' layout, through `digestd web` (the binary:
//! branding is the process's) on each back end: the name, the logo, the
//! accent colour and the footer line show on the sign-up page and on the
//! bad-link page, every value escaped even when it is made of markup
//! (values that pass the checks at start, chosen to break a page that
//! did not escape them); the logo's origin, and only it, is allowed by
//! the CSP.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::TestDb;

/// Markup in every value the checks let through: no control character, a
/// colour of the right shape, an https URL.
const CONFIG: &str = r##"[branding]
name = "Acme <Ops> \"&' </title><script>alert(1)</script>"
accent = "#aa3300"
footer = "</footer><script>alert(2)</script> & Co"
logo_url = "https://acme.example/logo.png?s=1&t=\"><script>alert(3)</script>"
"##;

/// `digestd web` on a free port, stopped (by its own pid) when dropped.
struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(db: &TestDb, dir: &std::path::Path) -> Served {
    let config = dir.join("digestd.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir)
        .args(["--config", config.to_str().unwrap(), "--db", &db.url, "web"])
        .env("DIGESTD_HTTP__LISTEN", format!("127.0.0.1:{port}"))
        .env_remove("DIGESTD_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut served = Served {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    // Up when it answers (polled: there is an event to wait for).
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = served.child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            let _ = served.child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("web exited ({status}): {err}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "web did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    served
}

fn branding_in_the_layout(db: &TestDb) {
    // The database made and migrated, as `digestd init` would.
    drop(db.conn());
    let dir = tempfile::tempdir().unwrap();
    let web = serve(db, dir.path());
    let client = reqwest::blocking::Client::new();
    for (path, status) in [
        ("/subscribe", 200),
        (&*format!("/s/{}", "ab".repeat(32)), 404),
    ] {
        let r = client
            .get(format!("{}{path}", web.base))
            .header("accept-language", "de")
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), status, "{path}");
        let csp = r
            .headers()
            .get("content-security-policy")
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let html = r.text().unwrap();
        let name = "Acme &#60;Ops&#62; &#34;&#38;&#39; &#60;/title&#62;&#60;script&#62;alert(1)&#60;/script&#62;";
        for want in [
            "<html lang=\"de\">",
            &format!("<title>Abonnieren · {name}</title>")[..],
            &format!("<span>{name}</span></header>"),
            "<img src=\"https://acme.example/logo.png?s=1&#38;t=&#34;&#62;&#60;script&#62;alert(3)&#60;/script&#62;\" alt=\"\">",
            "<p class=\"brand-footer\">&#60;/footer&#62;&#60;script&#62;alert(2)&#60;/script&#62; &#38; Co</p>",
            "a,a:visited{color:#aa3300}",
            "background:#aa3300",
        ] {
            // The 404 page has its own title.
            if path != "/subscribe" && want.starts_with("<title>") {
                continue;
            }
            assert!(html.contains(want), "{path}: {want:?} in {html}");
        }
        assert!(!html.contains("<script>alert"), "{path}: {html}");
        assert!(!html.contains("</footer><script>"), "{path}: {html}");
        // The logo's origin is allowed, nothing wider.
        assert!(csp.contains("img-src https://acme.example"), "{csp}");
        assert!(
            !csp.contains("img-src *") && !csp.contains("img-src https:;"),
            "{csp}"
        );
    }
}

backend_tests!(branding_in_the_layout);
