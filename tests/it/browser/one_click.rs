//! The RFC 8058 one-click unsubscribe as a mail provider sends it, from a
//! real email's `List-Unsubscribe` header over a plain socket; the browser
//! then shows the digest paused, and after "send me a new link" the old
//! URL still unsubscribes, and only that way.

use digestd::manage;

use super::common::at;
use super::common::browser::{Browser, Options};
use super::common::pages::{code, paused, snapshot};
use super::common::web::Web;
use super::{asha, edit, in_browser, on_server, one_digest, PostOffice, ONE_CLICK};

/// The RFC 8058 POST exactly as a mail provider sends it: to the URL of
/// the message's `List-Unsubscribe` header, `Content-Type:
/// application/x-www-form-urlencoded`, the body `List-Unsubscribe=One-Click`,
/// no cookie, no form token, over a plain socket. The browser then shows
/// the subscription paused, and the next tick sends nothing. After "send
/// me a new link", the old URL still unsubscribes, and only that way.
fn one_click_from_the_header(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = asha(&mut c);
    let mut po = PostOffice::new(web);
    assert!(po.run(&mut c, "2026-11-22T08:00:00Z").is_empty());
    edit(&mut c, &a, 1, "2026-11-22T10:00:00Z");
    let m = one_digest(&mut po, &mut c, "2026-11-23T08:00:00Z", 1);
    assert!(m.one_click, "{m:?}");
    let url = m.list_unsubscribe.expect("List-Unsubscribe");
    let (status, _) = raw_post(on_server(web, &url), ONE_CLICK);
    assert_eq!(status, 200);
    assert!(paused(&mut c, a.daily));
    // Idempotent: again 200, nothing more written.
    let once = snapshot(&mut c);
    assert_eq!(raw_post(&url, ONE_CLICK).0, 200);
    assert_eq!(snapshot(&mut c), once);
    b.open(&m.manage);
    let t = b.text();
    assert!(t.contains("Daily at 09:00 · by email · paused"), "{t}");
    edit(&mut c, &a, 2, "2026-11-23T10:00:00Z");
    assert!(po.run(&mut c, "2026-11-24T08:00:00Z").is_empty());

    // "Send me a new link": the old manage link ends; the old unsubscribe
    // link's page has one button, whose form sends exactly the one-click
    // body, and it stops the digest.
    let old = code(&mut c, a.party);
    b.press("form input[name=action][value=newlink] ~ button");
    let t = b.text();
    assert!(t.contains("A new link is on its way"), "{t}");
    assert_ne!(code(&mut c, a.party), old);
    b.open(&m.manage);
    let t = b.text();
    assert!(t.contains("This link is not valid"), "{t}");
    manage::resume(&mut c, a.daily, at("2026-11-24T09:00:00Z")).unwrap();
    assert!(!paused(&mut c, a.daily));
    b.open(&url);
    let t = b.text();
    assert!(t.contains("older message") && !t.contains("Rota"), "{t}");
    b.press("form input[name='List-Unsubscribe'] ~ button");
    let t = b.text();
    assert!(t.contains("You are unsubscribed"), "{t}");
    assert!(paused(&mut c, a.daily));
}

/// `POST url` over a fresh TCP connection with the bytes a provider sends;
/// the status and the body.
fn raw_post(url: &str, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let u = url::Url::parse(url).unwrap();
    let mut s = std::net::TcpStream::connect((u.host_str().unwrap(), u.port().unwrap())).unwrap();
    write!(
        s,
        "POST {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: mail-provider\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        u.path(),
        u.host_str().unwrap(),
        u.port().unwrap(),
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    (status, out)
}

#[test]
fn one_click_post_as_a_mail_provider_sends_it() {
    in_browser(Options::default(), one_click_from_the_header);
}
