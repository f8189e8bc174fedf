//! A real browser for the page tests: headless Chromium driven over
//! WebDriver (`chromedriver`, started here on a free port and killed on
//! drop) through `fantoccini`, behind a small blocking API so the tests
//! read like the other black-box tests.
//!
//! When `/usr/bin/chromium` or `/usr/bin/chromedriver` is missing the tests
//! are skipped with a line on stderr, unless `DIGESTD_TEST_BROWSER=required`
//! (set by `.ci/run`), which makes it a failure. Each page a test visits
//! can be saved as a PNG: under `target/pages/`, or the directory
//! `DIGESTD_TEST_SCREENSHOTS` names (`docs/pages/` is made that way).

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

use super::smtp::free_port;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The desktop window the tests and screenshots use.
pub const WIDTH: u32 = 1000;
pub const HEIGHT: u32 = 1200;

/// How a session's browser is set up.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Whether pages may run script (`false`: Chromium's content setting
    /// blocks it, as for a person who turned it off).
    pub javascript: bool,
    /// The browser's own time zone (`TZ` of chromedriver and so of
    /// Chromium), as a visitor's machine would have it; `None`: this
    /// machine's.
    pub timezone: Option<&'static str>,
    /// The languages the browser asks for (`Accept-Language`, Chromium's
    /// `intl.accept_languages`: `"de-DE,de"`); `None`: Chromium's own.
    pub languages: Option<&'static str>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            javascript: true,
            timezone: None,
            languages: None,
        }
    }
}

pub struct Browser {
    rt: tokio::runtime::Runtime,
    client: Option<Client>,
    driver: Child,
    log: tempfile::TempDir,
    pub options: Options,
}

fn installed() -> bool {
    Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()
}

impl Browser {
    /// A browser with `options`; `None` (skip) when Chromium is not
    /// installed and not required.
    pub fn start_with(options: Options) -> Option<Browser> {
        if !installed() {
            if std::env::var("DIGESTD_TEST_BROWSER").as_deref() == Ok("required") {
                panic!("DIGESTD_TEST_BROWSER=required but {CHROMIUM} or {CHROMEDRIVER} is missing");
            }
            eprintln!("skipped: chromium and chromium-driver are not installed");
            return None;
        }
        let log = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut driver = Command::new(CHROMEDRIVER);
        if let Some(tz) = options.timezone {
            driver.env("TZ", tz);
        }
        let driver = driver
            .arg(format!("--port={port}"))
            .arg(format!(
                "--log-path={}",
                log.path().join("chromedriver.log").display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut b = Browser {
            rt,
            client: None,
            driver,
            log,
            options,
        };
        let until = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < until,
                "chromedriver did not listen on {port}: {}",
                b.driver_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut prefs = serde_json::Map::new();
        if !options.javascript {
            prefs.insert(
                "profile.managed_default_content_settings.javascript".into(),
                json!(2),
            );
        }
        if let Some(l) = options.languages {
            prefs.insert("intl.accept_languages".into(), json!(l));
        }
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless=new",
                    // Root (CI) cannot use Chromium's sandbox.
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--hide-scrollbars",
                    format!("--window-size={WIDTH},{HEIGHT}"),
                ],
                "prefs": prefs,
            }),
        );
        let url = format!("http://127.0.0.1:{port}");
        let client =
            b.rt.block_on(ClientBuilder::native().capabilities(caps).connect(&url))
                .unwrap_or_else(|e| panic!("a WebDriver session: {e}\n{}", b.driver_log()));
        b.client = Some(client);
        Some(b)
    }

    fn driver_log(&self) -> String {
        let s =
            std::fs::read_to_string(self.log.path().join("chromedriver.log")).unwrap_or_default();
        s.lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn c(&self) -> &Client {
        self.client.as_ref().expect("a session")
    }

    /// Runs one WebDriver command to its end.
    pub fn run<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    ) -> T {
        self.rt
            .block_on(f)
            .unwrap_or_else(|e| panic!("WebDriver: {e}"))
    }

    /// Opens `url` and waits for the page to load.
    pub fn open(&self, url: &str) {
        self.run(self.c().goto(url));
    }

    pub fn url(&self) -> String {
        self.run(self.c().current_url()).to_string()
    }

    /// The page's title (`<title>`).
    pub fn title(&self) -> String {
        self.run(self.c().title())
    }

    /// The visible text of the whole page.
    pub fn text(&self) -> String {
        self.text_of("body")
    }

    /// The visible text of the first element `css` selects.
    pub fn text_of(&self, css: &str) -> String {
        let e = self.run(self.c().find(Locator::Css(css)));
        self.run(e.text())
    }

    /// The page's HTML as the browser holds it.
    pub fn source(&self) -> String {
        self.run(self.c().source())
    }

    /// Presses the button (or follows the link) `css` selects, and waits
    /// until the page it leads to has loaded: the old document is gone
    /// (its root is stale) and the new one has a body.
    pub fn press(&self, css: &str) {
        let root = self.run(self.c().find(Locator::Css("html")));
        let e = self.run(self.c().find(Locator::Css(css)));
        self.run(e.click());
        let until = Instant::now() + Duration::from_secs(30);
        while self.rt.block_on(root.tag_name()).is_ok() {
            assert!(Instant::now() < until, "{css}: no new page came");
            std::thread::sleep(Duration::from_millis(20));
        }
        while self
            .rt
            .block_on(self.c().find(Locator::Css("body")))
            .is_err()
        {
            assert!(Instant::now() < until, "{css}: the new page did not load");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `text` into the (emptied) text field `css` selects, as a
    /// person would.
    pub fn fill(&self, css: &str, text: &str) {
        let e = self.run(self.c().find(Locator::Css(css)));
        self.run(e.clear());
        self.run(e.send_keys(text));
    }

    /// Clicks what `css` selects when that leads to no new page (a tick
    /// box); `press` is for buttons and links.
    pub fn click(&self, css: &str) {
        let e = self.run(self.c().find(Locator::Css(css)));
        self.run(e.click());
    }

    /// Whether the tick box or option `css` selects is selected.
    pub fn is_selected(&self, css: &str) -> bool {
        let e = self.run(self.c().find(Locator::Css(css)));
        self.run(e.is_selected())
    }

    /// Opens a new tab and switches to it; the handle of the tab left.
    pub fn new_tab(&self) -> fantoccini::wd::WindowHandle {
        let old = self.run(self.c().window());
        let t = self.run(self.c().new_window(true));
        self.run(self.c().switch_to_window(t.handle));
        old
    }

    /// Closes the current tab and switches to `to`.
    pub fn close_tab(&self, to: fantoccini::wd::WindowHandle) {
        self.run(self.c().close_window());
        self.run(self.c().switch_to_window(to));
    }

    /// Picks the option with `value` in the `<select>` `css` selects, by
    /// clicking it as a person would.
    pub fn choose(&self, css: &str, value: &str) {
        let e = self.run(self.c().find(Locator::Css(css)));
        self.run(e.select_by_value(value));
    }

    /// The current value of the form control `css` selects.
    pub fn value_of(&self, css: &str) -> String {
        let e = self.run(self.c().find(Locator::Css(css)));
        self.run(e.prop("value")).unwrap_or_default()
    }

    /// Runs `script` in the page (only with `javascript` on).
    pub fn execute(&self, script: &str) -> Value {
        assert!(self.options.javascript, "script is off in this browser");
        self.run(self.c().execute(script, vec![]))
    }

    /// Forgets every cookie of the session (a fresh visitor).
    pub fn clear_cookies(&self) {
        self.run(self.c().delete_all_cookies());
    }

    /// Resizes the window (the page's viewport follows).
    pub fn resize(&self, width: u32, height: u32) {
        self.run(self.c().set_window_size(width, height));
    }

    /// `(document width, viewport width)` in CSS pixels: a page that fits
    /// has the first no larger than the second.
    pub fn widths(&self) -> (i64, i64) {
        let v = self.execute("return [document.documentElement.scrollWidth, window.innerWidth];");
        (v[0].as_i64().unwrap(), v[1].as_i64().unwrap())
    }

    /// Saves the page as `NAME.png` (see the module doc). With script on,
    /// the window takes the page's whole height for the picture (and gets
    /// its size back after); without, the picture is what the window shows.
    pub fn shot(&self, name: &str) -> PathBuf {
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let restore = self.options.javascript.then(|| {
            let (w, h) = self.run(self.c().get_window_size());
            let v = self.execute(
                "return [Math.ceil(document.body.getBoundingClientRect().bottom + window.scrollY), window.outerHeight - window.innerHeight];",
            );
            let page = v[0].as_u64().unwrap() + v[1].as_u64().unwrap();
            self.resize(w as u32, page as u32);
            (w, h)
        });
        let png = self.run(self.c().screenshot());
        if let Some((w, h)) = restore {
            self.resize(w as u32, h as u32);
        }
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

/// Where screenshots go: `DIGESTD_TEST_SCREENSHOTS`, else `target/pages`.
pub fn screenshot_dir() -> PathBuf {
    match std::env::var_os("DIGESTD_TEST_SCREENSHOTS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pages"),
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            let _ = self.rt.block_on(c.close());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
