//! `email.smtp_url`, `email.tls` and `email.tls_ca_file`: where and how
//! the `smtp` transport connects.
//!
//! TLS modes, as Postfix names them: `none` (plain), `opportunistic`
//! (STARTTLS when offered, the certificate not verified: encryption
//! against a passive listener, as `smtp_tls_security_level = may`),
//! `required` (STARTTLS, verified against the system's roots and
//! `tls_ca_file`, or no session), `wrapper` (TLS from the first byte,
//! verified, port 465).

use crate::config::EmailConfig;
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
    /// PEM certificates from `email.tls_ca_file`, each trusted as a root
    /// besides the system's.
    pub roots: Vec<Vec<u8>>,
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
        roots: Vec::new(),
    })
}

/// The mode `email.tls` names; `""` leaves it to the URL.
fn tls_setting(s: &str) -> Result<Option<Tls>> {
    Ok(Some(match s {
        "" => return Ok(None),
        "none" => Tls::None,
        "opportunistic" => Tls::Starttls { required: false },
        "required" => Tls::Starttls { required: true },
        "wrapper" => Tls::Wrapper,
        _ => {
            return Err(Error::invalid(format!(
                "config: email.tls {s:?}: use \"none\", \"opportunistic\", \"required\" or \"wrapper\""
            )));
        }
    }))
}

/// The PEM certificates of `email.tls_ca_file`: a readable file with at
/// least one certificate, each of which parses, or a one-line refusal.
fn read_roots(path: &str) -> Result<Vec<Vec<u8>>> {
    let shown = crate::validate::quoted(path);
    let bad = |why: String| Error::invalid(format!("config: email.tls_ca_file {shown}: {why}"));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut roots = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find(BEGIN) {
        let end = rest[start..]
            .find(END)
            .ok_or_else(|| bad("a certificate has no END line".into()))?
            + start
            + END.len();
        let pem = rest.as_bytes()[start..end].to_vec();
        lettre::transport::smtp::client::Certificate::from_pem(&pem)
            .map_err(|e| bad(format!("certificate {}: {e}", roots.len() + 1)))?;
        roots.push(pem);
        rest = &rest[end..];
    }
    if roots.is_empty() {
        return Err(bad("no PEM certificate in it".into()));
    }
    Ok(roots)
}

/// Where and how to connect, from every `[email]` SMTP setting.
pub(super) fn target(cfg: &EmailConfig) -> Result<Target> {
    let mut t = parse_url(&cfg.smtp_url)?;
    if let Some(tls) = tls_setting(&cfg.tls)? {
        let from_url = cfg.smtp_url.contains("tls=") || cfg.smtp_url.starts_with("smtps:");
        if from_url && tls != t.tls {
            return Err(Error::invalid(
                "config: email.tls and email.smtp_url name different TLS modes: say it once",
            ));
        }
        if !from_url && t.tls != tls {
            let explicit_port = url::Url::parse(&cfg.smtp_url)
                .ok()
                .and_then(|u| u.port())
                .is_some();
            if !explicit_port {
                t.port = match tls {
                    Tls::None => 25,
                    Tls::Starttls { .. } => 587,
                    Tls::Wrapper => 465,
                };
            }
            t.tls = tls;
        }
    }
    if !cfg.tls_ca_file.is_empty() {
        t.roots = read_roots(&cfg.tls_ca_file)?;
    }
    Ok(t)
}

/// Checks the `smtp` transport's settings without connecting.
pub fn check(cfg: &EmailConfig) -> Result<()> {
    target(cfg).map(|_| ())
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
