//! `email.smtp_url`: where and how the `smtp` transport connects.

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tls {
    None,
    Starttls { required: bool },
    Wrapper,
}

/// Where and how to connect, from `email.smtp_url`.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub host: String,
    pub port: u16,
    pub tls: Tls,
    pub credentials: Option<(String, String)>,
    pub hello: String,
}

pub(super) fn parse_url(raw: &str) -> Result<Target> {
    let bad = |why: &str| {
        let shown = crate::text::redact_url(raw);
        Error::invalid(format!("config: email.smtp_url {shown:?}: {why}"))
    };
    if raw.is_empty() {
        return Err(bad("required when email.transport is \"smtp\""));
    }
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("no spaces or control characters"));
    }
    let u = url::Url::parse(raw).map_err(|e| bad(&e.to_string()))?;
    let host = u
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad("no host"))?
        .trim_matches(|c| c == '[' || c == ']')
        .to_string();
    let tls_q = u
        .query_pairs()
        .find(|(k, _)| k == "tls")
        .map(|(_, v)| v.to_string());
    let (tls, default_port) = match (u.scheme(), tls_q.as_deref()) {
        ("smtp", None) => (Tls::None, 25),
        ("smtp", Some("required")) => (Tls::Starttls { required: true }, 587),
        ("smtp", Some("opportunistic")) => (Tls::Starttls { required: false }, 587),
        ("smtps", None) => (Tls::Wrapper, 465),
        _ => {
            return Err(bad(
                "use smtp://host:port, smtp://host:port?tls=required|opportunistic or smtps://host:port",
            ))
        }
    };
    let dec = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| bad("credentials are not UTF-8"))
    };
    let credentials = match u.password() {
        Some(p) => Some((dec(u.username())?, dec(p)?)),
        None => None,
    };
    let path = u.path().trim_matches('/');
    Ok(Target {
        host,
        port: u.port().unwrap_or(default_port),
        tls,
        credentials,
        hello: if path.is_empty() {
            "localhost".into()
        } else {
            path.to_string()
        },
    })
}

/// Checks `email.smtp_url` without connecting.
pub fn check_url(url: &str) -> Result<()> {
    parse_url(url).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = parse_url("smtp://127.0.0.1:2525").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, &t.tls),
            ("127.0.0.1", 2525, &Tls::None)
        );
        let t = parse_url("smtp://bob:p%40ss@mail.example.com?tls=required").unwrap();
        assert_eq!((t.port, &t.tls), (587, &Tls::Starttls { required: true }));
        assert_eq!(t.credentials, Some(("bob".into(), "p@ss".into())));
        assert_eq!(parse_url("smtps://mail.example.com").unwrap().port, 465);
        for bad in [
            "",
            "http://mail:25",
            "smtp://",
            "smtp://mail:25?tls=maybe",
            "smtp://mail:25\r\nX: y",
            "smtp://mail :25",
            "smtp://mail:99999",
        ] {
            assert!(parse_url(bad).is_err(), "{bad:?}");
        }
    }
}
