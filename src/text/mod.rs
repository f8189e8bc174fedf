//! Text helpers that both the digests and their delivery need, kept below
//! both: one-line folding for subjects and headers, the configured sender
//! as a mailbox, and SMS segment arithmetic ([`gsm`]).

pub mod gsm;

use std::str::FromStr;

use lettre::message::Mailbox;

use crate::error::{Error, Result};
use crate::validate;

/// Any control character (CR, LF, TAB, …) becomes a space: subjects and
/// headings are one line, whatever the stored text holds.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The configured sender, "Name <address>" or a bare address.
pub fn parse_from(s: &str) -> Result<Mailbox> {
    let bad = |why: &str| Error::invalid(format!("config: email.from {s:?}: {why}"));
    if s.chars().any(char::is_control) {
        return Err(bad("control character"));
    }
    let m = Mailbox::from_str(s).map_err(|e| bad(&e.to_string()))?;
    validate::email(m.email.as_ref()).map_err(|e| bad(&e.to_string()))?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_senders_are_refused() {
        for bad in ["", "nobody", "a <b@c>\r\nBcc: x@y", "<@>", "x@-bad-"] {
            assert!(parse_from(bad).is_err(), "{bad:?}");
        }
        assert!(parse_from("alerts@example.com").is_ok());
    }

    #[test]
    fn one_line_turns_every_control_character_into_a_space() {
        assert_eq!(one_line("a\r\nBcc: x\ty"), "a  Bcc: x y");
    }
}
