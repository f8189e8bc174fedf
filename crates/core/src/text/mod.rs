//! Text helpers that both the digests and their delivery need, kept below
//! both: one-line folding for subjects and headers, hex, URLs with their
//! password hidden, SMS segment arithmetic ([`gsm`]), HMAC-SHA256 ([`hmac`]).

pub mod gsm;
pub mod hmac;

/// Any control character (CR, LF, TAB, …) becomes a space: subjects and
/// headings are one line, whatever the stored text holds.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Bytes as lowercase hex, two digits each (secrets, hashes, tags).
pub fn hex(bytes: &[u8]) -> String {
    // Two table look-ups a byte, not a formatter call (this runs for the
    // MAC in every digest's link).
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// `s` with the password of a URL's user info replaced by `***`
/// (`postgres://root:***@db/x`), for anything printed or logged: a
/// database, SMTP or gateway URL may carry a secret.
pub fn redact_url(s: &str) -> String {
    let Some(scheme_end) = s.find("://").map(|i| i + 3) else {
        return s.to_string();
    };
    let rest = &s[scheme_end..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@').map(|at| (at, &authority[..at])) {
        Some((at, userinfo)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &s[..scheme_end], &rest[at..])
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let want: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex(&all), want);
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn passwords_in_urls_are_redacted() {
        for (url, want) in [
            (
                "postgres://root:Secret@db:5432/x",
                "postgres://root:***@db:5432/x",
            ),
            (
                "smtp://bob:p%40ss@mail.example.com?tls=required",
                "smtp://bob:***@mail.example.com?tls=required",
            ),
            ("https://u:p:q@gw/send?x=a@b", "https://u:***@gw/send?x=a@b"),
            ("https://gw/send?user=a:b@c", "https://gw/send?user=a:b@c"),
            (
                "postgres://root@127.0.0.1/test",
                "postgres://root@127.0.0.1/test",
            ),
            ("sqlite://data/digestd.db", "sqlite://data/digestd.db"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact_url(url), want, "{url}");
        }
    }

    #[test]
    fn one_line_turns_every_control_character_into_a_space() {
        assert_eq!(one_line("a\r\nBcc: x\ty"), "a  Bcc: x y");
    }
}
