//! Email messages: RFC 5322 with MIME multipart/alternative (text and
//! HTML; inside multipart/mixed with a forward digest's calendar), built
//! with lettre's builder, which encodes non-ASCII headers
//! (RFC 2047); [`super::encode`] encodes the bodies. Header values come
//! from validated text and pass through [`one_line`] again here, so no
//! value can start a header.

use chrono::{DateTime, Utc};
use lettre::message::dkim::DkimConfig;
use lettre::message::header::{ContentDisposition, ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::Message;

use super::encode;
use super::threading::{self, Thread};
use crate::digest::words::Style;
use crate::error::{Error, Result};
use crate::i18n::Arg;
use crate::text::one_line;

/// One message to build.
pub struct Email<'a> {
    pub from: &'a Mailbox,
    /// The actor shown as the sender's name, when there is one.
    pub from_name: Option<&'a str>,
    /// The recipient's display name; empty for none (the address alone).
    pub to_name: &'a str,
    pub to_address: &'a str,
    pub subject: &'a str,
    pub text: &'a str,
    pub html: Option<&'a str>,
    pub date: DateTime<Utc>,
    /// Without angle brackets: "digest.1000.7@localhost".
    pub message_id: &'a str,
    /// RFC 8058 one-click unsubscribe target.
    pub unsubscribe: Option<&'a str>,
    /// A digest's thread and list ([`super::threading`]).
    pub thread: Option<&'a Thread>,
    /// A forward digest's calendar: attached beside the text and HTML
    /// ([`with_calendar`]).
    pub calendar: Option<&'a str>,
    /// Signs the message when DKIM is configured.
    pub dkim: Option<&'a DkimConfig>,
}

fn header(name: &'static str, value: String) -> HeaderValue {
    HeaderValue::new(HeaderName::new_from_ascii_str(name), one_line(&value))
}

/// The message as the bytes of an RFC 5322 file (CRLF line ends).
pub fn build(e: &Email) -> Result<Vec<u8>> {
    let from = match e.from_name {
        Some(n) => Mailbox::new(
            Some(format!(
                "{} via {}",
                one_line(n),
                e.from.name.as_deref().unwrap_or("digestd")
            )),
            e.from.email.clone(),
        ),
        None => e.from.clone(),
    };
    let to_addr = e
        .to_address
        .parse()
        .map_err(|err| Error::invalid(format!("address {:?}: {err}", e.to_address)))?;
    let mut b = Message::builder()
        .from(from)
        .to(Mailbox::new(
            Some(one_line(e.to_name)).filter(|n| !n.trim().is_empty()),
            to_addr,
        ))
        .subject(subject_line(e.subject))
        .date(e.date.into())
        .message_id(Some(format!("<{}>", one_line(e.message_id))))
        .raw_header(header("Auto-Submitted", "auto-generated".into()));
    if let Some(u) = e.unsubscribe {
        b = b
            .raw_header(header("List-Unsubscribe", format!("<{u}>")))
            .raw_header(header(
                "List-Unsubscribe-Post",
                "List-Unsubscribe=One-Click".into(),
            ));
    }
    for h in e.thread.map(threading::headers).unwrap_or_default() {
        b = b.raw_header(h);
    }
    let mut msg = match (e.html, e.calendar) {
        (Some(h), None) => b.multipart(MultiPart::alternative_plain_html(
            encode::body(e.text),
            encode::body(h),
        )),
        (None, None) => b.singlepart(SinglePart::plain(encode::body(e.text))),
        (html, Some(cal)) => b.multipart(with_calendar(e.text, html, cal)?),
    }
    .map_err(|err| Error::invalid(format!("building a message: {err}")))?;
    if let Some(k) = e.dkim {
        msg.sign(k);
    }
    Ok(msg.formatted())
}

/// The file name a calendar is attached under.
pub const CALENDAR_FILE: &str = "digest.ics";

/// The body of a message with a calendar: `multipart/mixed` holding the
/// readable message (text and HTML as `multipart/alternative`) and the
/// calendar as an attachment, `text/calendar; method=PUBLISH`, named
/// [`CALENDAR_FILE`] (RFC 6047 §2.4, §2.6). Not a third alternative: the
/// calendar is not the message in another form, and a reader that prefers
/// the last alternative it can show would show the calendar instead of
/// the digest (`docs/digests.md`, Calendar).
fn with_calendar(text: &str, html: Option<&str>, calendar: &str) -> Result<MultiPart> {
    let readable = match html {
        Some(h) => MultiPart::alternative_plain_html(encode::body(text), encode::body(h)),
        None => MultiPart::alternative().singlepart(SinglePart::plain(encode::body(text))),
    };
    let kind = ContentType::parse("text/calendar; method=PUBLISH; charset=UTF-8")
        .map_err(|err| Error::Storage(format!("the calendar's content type: {err}")))?;
    let part = SinglePart::builder()
        .header(kind)
        .header(ContentDisposition::attachment(CALENDAR_FILE))
        .body(encode::body(calendar));
    Ok(MultiPart::mixed().multipart(readable).singlepart(part))
}

/// The one RFC 8058 target of a message holding several digests: their
/// links `{base}/s/{code}/unsubscribe/{id}` (one person's, so one code)
/// joined as `{base}/s/{code}/unsubscribe/{id1},{id2}`, which stops them
/// all. The code in the link is the capability; the page refuses an id
/// that is not its owner's, so the list cannot be edited to stop someone
/// else's digests. `None` when no part has a link, or when the links do
/// not share one prefix (then no header is safer than a wrong one).
pub(crate) fn combine_unsubscribe<'a>(urls: impl IntoIterator<Item = &'a str>) -> Option<String> {
    const MARK: &str = "/unsubscribe/";
    let mut prefix: Option<&str> = None;
    let mut ids: Vec<&str> = Vec::new();
    for u in urls {
        let (p, id) = u.rsplit_once(MARK)?;
        if *prefix.get_or_insert(p) != p {
            return None;
        }
        for one in id.split(',') {
            if !ids.contains(&one) {
                ids.push(one);
            }
        }
    }
    prefix.map(|p| format!("{p}{MARK}{}", ids.join(",")))
}

/// One notification inside a batched message.
pub struct Part<'a> {
    pub subject: &'a str,
    pub text: &'a str,
    pub html: Option<&'a str>,
    pub date: DateTime<Utc>,
}

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    let mut plain = 0;
    // The five are ASCII, so every cut is on a character boundary.
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'&' => "&amp;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[plain..i]);
        out.push_str(entity);
        plain = i + 1;
    }
    out.push_str(&s[plain..]);
    out
}

/// Plain text as HTML: escaped, line breaks kept.
pub(crate) fn text_to_html(text: &str) -> String {
    format!(
        "<div style=\"white-space:pre-wrap;font-family:sans-serif\">{}</div>",
        escape_html(text)
    )
}

/// How a recipient with no preferences of its own reads times (a group
/// sent to as one, an address with no user): UTC, 24-hour, as a group's
/// digests.
pub(crate) fn utc_style() -> Style {
    Style::new(chrono_tz::UTC, "en-GB")
}

/// The subject, text and HTML of one message holding `parts` (seed 000's
/// batching: every pending notification from one sender to one recipient
/// goes out as one message). One part keeps its own subject and bodies; several
/// become sections headed "Message sent on … regarding …", the time in the
/// recipient's zone and 12/24-hour `style`, as its digests show times
/// ("Mon, Nov 23, 4:00 AM EST", "Mon 23 Nov, 10:00 CET").
pub(crate) fn combine(parts: &[Part], style: &Style) -> (String, String, String) {
    match parts {
        [] => (String::new(), String::new(), String::new()),
        [p] => (
            p.subject.to_string(),
            p.text.to_string(),
            p.html.map_or_else(|| text_to_html(p.text), str::to_string),
        ),
        [first, ..] => {
            let subject = style.say(
                "notification-batch-subject",
                &[
                    ("subject", Arg::Str(first.subject)),
                    ("count", Arg::Num(parts.len() - 1)),
                ],
            );
            let mut text = String::new();
            let mut html = String::from("<!DOCTYPE html><html><body>");
            for p in parts {
                let when = style.when(p.date);
                let head = style.say(
                    "notification-sent",
                    &[("when", Arg::Str(&when)), ("subject", Arg::Str(p.subject))],
                );
                text.push_str(&format!("{head}\n\n{}\n\n", p.text.trim_end()));
                html.push_str(&format!(
                    "<h3 style=\"font-family:sans-serif\">{}</h3>{}<hr>",
                    escape_html(&head),
                    p.html.map_or_else(|| text_to_html(p.text), str::to_string)
                ));
            }
            html.push_str("</body></html>");
            (subject, text, html)
        }
    }
}

/// The longest subject sent, in characters: RFC 5322 allows a header line
/// of 998 octets, and a subject read in a mailbox list is far shorter.
pub const MAX_SUBJECT_CHARS: usize = 250;

/// The subject on one line, cut at [`MAX_SUBJECT_CHARS`] with "…", so that
/// its header line (lettre folds encoded words) stays under 998 octets.
fn subject_line(s: &str) -> String {
    let one = one_line(s);
    match one.char_indices().nth(MAX_SUBJECT_CHARS - 1) {
        Some((i, _)) => format!("{}…", one[..i].trim_end()),
        None => one,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_batch_gets_one_unsubscribe_link_for_all_its_digests() {
        use super::combine_unsubscribe as c;
        let a = "https://d.example/s/abc/unsubscribe/7";
        let b = "https://d.example/s/abc/unsubscribe/9";
        assert_eq!(c([]), None);
        assert_eq!(c([a]).as_deref(), Some(a));
        assert_eq!(
            c([a, b, a]).as_deref(),
            Some("https://d.example/s/abc/unsubscribe/7,9")
        );
        // Two people's links never make one.
        assert_eq!(c([a, "https://d.example/s/xyz/unsubscribe/9"]), None);
        assert_eq!(c(["https://d.example/elsewhere"]), None);
    }

    use super::*;
    use crate::config::parse_from;
    use chrono::TimeZone;
    use mail_parser::MimeHeaders;

    fn email<'a>(from: &'a Mailbox, subject: &'a str, name: &'a str) -> Email<'a> {
        Email {
            from,
            from_name: Some(name),
            to_name: "Zoë",
            to_address: "zoe@example.com",
            subject,
            text: "hello\n",
            html: Some("<p>hello</p>"),
            date: Utc.with_ymd_and_hms(2026, 11, 23, 8, 0, 0).unwrap(),
            message_id: "digest.1000.7@localhost",
            unsubscribe: Some("http://localhost:8080/u/abc/7"),
            thread: None,
            calendar: None,
            dkim: None,
        }
    }

    #[test]
    fn headers_cannot_be_injected() {
        let from = parse_from("digestd <digestd@localhost>").unwrap();
        let bytes = build(&email(
            &from,
            "Hi\r\nBcc: evil@example.com",
            "eve\r\nX-Evil: 1",
        ))
        .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let headers = text.split("\r\n\r\n").next().unwrap();
        assert!(!headers.lines().any(|l| l.starts_with("Bcc:")), "{headers}");
        assert!(
            !headers.lines().any(|l| l.starts_with("X-Evil:")),
            "{headers}"
        );
        assert!(headers.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"));
        assert!(headers.contains("Message-ID: <digest.1000.7@localhost>"));
        assert!(headers.contains("Date: Mon, 23 Nov 2026 08:00:00 +0000"));
        assert!(text.contains("multipart/alternative"));
    }

    /// The audit's finding 13: a 1,000-character subject made a 1,009-octet
    /// line. No line of a message passes 998 octets, ASCII or not.
    #[test]
    fn a_long_subject_keeps_every_line_within_998_octets() {
        let from = parse_from("digestd <digestd@localhost>").unwrap();
        for subject in [
            "x".repeat(1000),
            "ü".repeat(1000),
            "word ".repeat(200),
            "€".repeat(600),
        ] {
            let bytes = build(&email(&from, &subject, "zoë")).unwrap();
            let text = String::from_utf8(bytes).unwrap();
            for line in text.split("\r\n") {
                assert!(line.len() <= 998, "{} octets: {line:.80}", line.len());
            }
            let m = mail_parser::MessageParser::default()
                .parse(text.as_bytes())
                .unwrap();
            let got = m.subject().unwrap();
            assert_eq!(got.chars().count(), MAX_SUBJECT_CHARS, "{got}");
            assert!(got.ends_with('…'));
        }
        assert_eq!(subject_line("short"), "short");
    }

    /// A calendar goes beside the text and HTML, as an attachment with its
    /// method, and comes back byte for byte (quoted-printable when it is
    /// not ASCII); without one the message is text and HTML alone.
    #[test]
    fn a_calendar_is_attached_beside_the_readable_message() {
        let from = parse_from("digestd <digestd@localhost>").unwrap();
        let cal = "BEGIN:VCALENDAR\r\nMETHOD:PUBLISH\r\nSUMMARY:Café\\; 東京\r\nEND:VCALENDAR\r\n";
        let plain = build(&email(&from, "s", "n")).unwrap();
        let with = build(&Email {
            calendar: Some(cal),
            ..email(&from, "s", "n")
        })
        .unwrap();
        let m = mail_parser::MessageParser::default().parse(&with).unwrap();
        let types: Vec<String> = m
            .parts
            .iter()
            .map(|p| {
                let t = p.content_type().unwrap();
                format!("{}/{}", t.ctype(), t.subtype().unwrap_or_default())
            })
            .collect();
        assert_eq!(
            types,
            [
                "multipart/mixed",
                "multipart/alternative",
                "text/plain",
                "text/html",
                "text/calendar"
            ]
        );
        let part = m.attachments().next().unwrap();
        assert_eq!(part.attachment_name(), Some(CALENDAR_FILE));
        assert_eq!(
            part.content_type().unwrap().attribute("method"),
            Some("PUBLISH")
        );
        assert_eq!(part.contents(), cal.as_bytes());
        let p = mail_parser::MessageParser::default().parse(&plain).unwrap();
        assert_eq!(p.attachment_count(), 0);
        assert!(!String::from_utf8(plain)
            .unwrap()
            .contains("multipart/mixed"));
    }

    #[test]
    fn non_ascii_subject_is_encoded() {
        let from = parse_from("digestd <digestd@localhost>").unwrap();
        let bytes = build(&email(&from, "3 changes in Kalender — München", "zoë")).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let subject = text.lines().find(|l| l.starts_with("Subject:")).unwrap();
        assert!(
            subject.is_ascii() && subject.contains("=?utf-8?"),
            "{subject}"
        );
    }

    /// The sections of a batched message give the time each part was sent
    /// in the recipient's zone and clock, as its digests show times, not
    /// "Message sent on … UTC" whoever reads them.
    #[test]
    fn a_batch_says_when_each_part_was_sent_in_the_recipients_zone_and_clock() {
        let part = |subject, date| Part {
            subject,
            text: "body",
            html: None,
            date,
        };
        // 14:30 UTC on a winter Monday, and 13:05 UTC in July.
        let winter = Utc.with_ymd_and_hms(2026, 11, 23, 14, 30, 0).unwrap();
        let summer = Utc.with_ymd_and_hms(2026, 7, 6, 13, 5, 0).unwrap();
        let parts = [part("First", winter), part("Second", summer)];
        let ny = Style::new(chrono_tz::America::New_York, "en-US");
        let (_, text, html) = combine(&parts, &ny);
        assert!(
            text.starts_with("Message sent on Mon, Nov 23, 9:30 AM EST regarding First\n"),
            "{text}"
        );
        assert!(
            text.contains("Message sent on Mon, Jul 6, 9:05 AM EDT regarding Second\n"),
            "{text}"
        );
        assert!(html.contains(">Message sent on Mon, Nov 23, 9:30 AM EST regarding First</h3>"));
        assert!(!text.contains("UTC"), "{text}");
        let berlin = Style::new(chrono_tz::Europe::Berlin, "de-DE");
        let (_, text, _) = combine(&parts, &berlin);
        assert!(
            text.starts_with("Nachricht vom Mo., 23. Nov., 15:30 CET zu First\n"),
            "{text}"
        );
        assert!(
            text.contains("Nachricht vom Mo., 6. Juli, 15:05 CEST zu Second\n"),
            "{text}"
        );
        assert!(!text.contains(" AM ") && !text.contains(" PM "), "{text}");
        // No preferences: UTC, 24-hour.
        let (_, text, _) = combine(&parts, &utc_style());
        assert!(
            text.starts_with("Message sent on Mon 23 Nov, 14:30 UTC regarding First\n"),
            "{text}"
        );
    }

    #[test]
    fn several_parts_become_sections_and_html_is_escaped() {
        let d = Utc.with_ymd_and_hms(2026, 11, 23, 8, 0, 0).unwrap();
        let parts = [
            Part {
                subject: "Build <1> failed",
                text: "red",
                html: None,
                date: d,
            },
            Part {
                subject: "Build 2 passed",
                text: "green",
                html: None,
                date: d,
            },
        ];
        let (subject, text, html) = combine(&parts, &utc_style());
        assert_eq!(subject, "Build <1> failed (and 1 more)");
        assert!(text.starts_with(
            "Message sent on Mon 23 Nov, 08:00 UTC regarding Build <1> failed\n\nred\n\n"
        ));
        assert!(text.contains("regarding Build 2 passed\n\ngreen"));
        assert!(
            html.contains("regarding Build &lt;1&gt; failed</h3>"),
            "{html}"
        );
        assert_eq!(
            escape_html("a<b>&\"c'\u{e9}\u{1F600}<"),
            "a&lt;b&gt;&amp;&quot;c&#39;\u{e9}\u{1F600}&lt;"
        );
        assert_eq!(escape_html(""), "");
        let (s1, t1, h1) = combine(&parts[..1], &utc_style());
        assert_eq!((s1.as_str(), t1.as_str()), ("Build <1> failed", "red"));
        assert!(h1.contains(">red</div>"));
    }
}
