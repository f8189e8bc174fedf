//! The headers that keep one subscription's email digests to one person in
//! one thread and say which list they are of:
//!
//! - `In-Reply-To` and `References`: the subscription's thread root for
//!   that party ([`MessageKey::thread_root`](super::msgid::MessageKey::thread_root)),
//!   a Message-ID computed from the subscription, the party and the site
//!   key, so nothing is stored for it and a message rebuilt after a crash
//!   carries the same headers. The root itself is never sent: a reader
//!   threading by references (JWZ, RFC 5256's REFERENCES) makes an empty
//!   container for it and hangs every digest under it.
//! - `List-Id` (RFC 2919): `"Collection name" <COLLECTION-UUID.lists.HOST>`,
//!   HOST the sender's domain; a subscription to every collection is
//!   `<all.lists.HOST>`. The name is a stored value: made one line, then
//!   quoted or RFC 2047-encoded as lettre writes a mailbox's name, so
//!   no character of it can end the header.
//! - `List-Post: NO` (RFC 2369): nobody posts to a digest.

use email_encoding::headers::writer::EmailWriter;
use lettre::message::header::{HeaderName, HeaderValue};

use crate::text::one_line;

/// What threads one message: its subscription's root, and its list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// The root's id, without angle brackets.
    pub root: String,
    /// The list the message is of (`List-Id`).
    pub list: Option<List>,
}

/// A digest's list: a collection, or every collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List {
    /// The display name (a collection's name: user input).
    pub name: String,
    /// `COLLECTION-UUID.lists.HOST` ([`list_id`]).
    pub id: String,
}

/// The list identifier of a collection's digests (`None`: every
/// collection) sent from `host`: `UUID.lists.HOST`, kept to the letters,
/// digits, dots and hyphens RFC 2919 allows (a UUID and a domain hold no
/// others; anything else is dropped rather than written).
pub fn list_id(collection_uuid: Option<&str>, host: &str) -> String {
    let raw = format!("{}.lists.{host}", collection_uuid.unwrap_or("all"));
    list_id_chars(&raw.to_ascii_lowercase())
}

fn name(s: &'static str) -> HeaderName {
    HeaderName::new_from_ascii_str(s)
}

/// The headers of `t`, in the order they are written.
pub fn headers(t: &Thread) -> Vec<HeaderValue> {
    let root = format!("<{}>", one_line(&t.root).replace(['<', '>', ' '], ""));
    let mut out = vec![
        HeaderValue::new(name("In-Reply-To"), root.clone()),
        HeaderValue::new(name("References"), root),
    ];
    if let Some(l) = &t.list {
        out.push(list_id_header(l));
        out.push(HeaderValue::new(name("List-Post"), "NO".into()));
    }
    out
}

/// `List-Id: "Name" <id>`, the name quoted, escaped or RFC 2047-encoded
/// by the encoder lettre writes a mailbox's name with; no name, the id
/// alone.
fn list_id_header(l: &List) -> HeaderValue {
    let id = list_id_chars(&l.id);
    let display = one_line(&l.name);
    let display = display.trim();
    let mut encoded = String::new();
    {
        let mut w = EmailWriter::new(&mut encoded, "List-Id: ".len(), 0, false);
        if !display.is_empty() {
            // Writing to a String cannot fail.
            let _ = email_encoding::headers::quoted_string::encode(display, &mut w);
            w.space();
        }
        let _ = std::fmt::Write::write_str(&mut w.folding(), &format!("<{id}>"));
    }
    let raw = format!("{display} <{id}>");
    HeaderValue::dangerous_new_pre_encoded(name("List-Id"), raw, encoded)
}

fn list_id_chars(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect()
}

#[cfg(test)]
mod tests;
