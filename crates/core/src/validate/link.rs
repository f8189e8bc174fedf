//! The address of an item in its source system (`url` on `item put` and
//! `record` lines): the link feeds and digests give the item.

use crate::error::{Invalid, Result};

/// Longest item URL accepted, in bytes (before and after normalising).
pub const MAX_ITEM_URL: usize = 2048;

/// An item's URL: absolute `http` or `https` with a host, no credentials
/// (`user:pass@` would be shown to every reader), no whitespace, control
/// or other hostile character, at most [`MAX_ITEM_URL`] bytes. Returned
/// normalised as the URL standard writes it (what a browser would ask
/// for: `"`, `<`, `>` and non-ASCII percent-encoded, the host lower-cased).
pub fn item_url(s: &str) -> Result<String> {
    let shown = || super::quoted(&s.chars().take(80).collect::<String>());
    let bad = |why: &str| Invalid::new(format!("invalid url {}: {why}", shown()));
    if s.len() > MAX_ITEM_URL {
        return Err(Invalid::new(format!(
            "url is longer than {MAX_ITEM_URL} bytes"
        )));
    }
    if let Some(what) = bad_char(s) {
        return Err(bad(&format!("it contains {what}")));
    }
    let u = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(bad("use an http or https URL"));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(bad("it names no host"));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(bad("it carries credentials (user:password@)"));
    }
    let out = u.to_string();
    if out.len() > MAX_ITEM_URL {
        return Err(Invalid::new(format!(
            "url is longer than {MAX_ITEM_URL} bytes once encoded"
        )));
    }
    Ok(out)
}

/// The first character no URL of ours may hold (hostile or white space),
/// described for an error message.
pub(super) fn bad_char(s: &str) -> Option<String> {
    s.chars()
        .find(|&c| super::is_hostile_char(c) || c.is_whitespace())
        .map(describe)
}

fn describe(c: char) -> String {
    if super::is_hostile_char(c) {
        super::describe(c)
    } else if c == ' ' {
        "a space".into()
    } else {
        format!("white space (U+{:04X})", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_urls_are_kept_normalised() {
        assert_eq!(
            item_url("https://Wiki.Example/page?id=7#top").unwrap(),
            "https://wiki.example/page?id=7#top"
        );
        assert_eq!(
            item_url("http://cal.example:8080/e/ü\"<x>").unwrap(),
            "http://cal.example:8080/e/%C3%BC%22%3Cx%3E"
        );
        assert_eq!(item_url("https://x.example").unwrap(), "https://x.example/");
    }

    #[test]
    fn hostile_urls_are_refused_in_one_line() {
        let long = format!("https://x.example/{}", "a".repeat(MAX_ITEM_URL));
        for bad in [
            "",
            "javascript:alert(1)",
            "data:text/html,<script>",
            "ftp://x.example/f",
            "mailto:a@x.example",
            "/items/relative",
            "x.example/page",
            "https://user:pass@x.example/",
            "https://user@x.example/",
            "https://x.example/a\r\nX-Injected: 1",
            "https://x.example/a\nb",
            "https://x.example/a b",
            "https://x.example/\u{0}",
            "https://x.example/\u{202E}gnp",
            "https://x.example/\u{2028}",
            "https://x.example/\u{FFFE}",
            "http://",
            "https://:80/",
            long.as_str(),
        ] {
            let e = item_url(bad).expect_err(bad).to_string();
            assert!(!e.contains('\n') && !e.contains('\r'), "{e:?}");
            assert!(e.len() < 300, "{e}");
        }
        // Percent-encoded line breaks stay encoded: they reach no header.
        assert_eq!(
            item_url("https://x.example/a%0D%0Ab").unwrap(),
            "https://x.example/a%0D%0Ab"
        );
    }
}
