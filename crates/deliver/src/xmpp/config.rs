//! `[xmpp]` checked without connecting, and the `server` override read.

use tokio_xmpp::jid::BareJid;

use crate::config::{XmppConfig, XmppTransport};
use crate::error::{Error, Result};

/// Checks `[xmpp]` without connecting.
pub fn check(c: &XmppConfig) -> Result<()> {
    let bad = |why: String| Error::invalid(format!("config: xmpp.{why}"));
    if !(1..=600).contains(&c.timeout_seconds) {
        return Err(bad("timeout_seconds must be 1-600".into()));
    }
    if !(100..=100_000).contains(&c.max_chars) {
        return Err(bad("max_chars must be 100-100000".into()));
    }
    if !(1..=86_400).contains(&c.reconnect_cap_seconds) {
        return Err(bad("reconnect_cap_seconds must be 1-86400".into()));
    }
    if c.ack_window > 1000 {
        return Err(bad("ack_window must be 0-1000".into()));
    }
    for (name, v) in [
        ("jid", &c.jid),
        ("password", &c.password),
        ("server", &c.server),
    ] {
        if v.chars().any(char::is_control) {
            return Err(bad(format!("{name}: no control characters")));
        }
    }
    if c.transport == XmppTransport::Dir {
        return Ok(());
    }
    if c.jid.is_empty() {
        return Err(bad(
            "jid: required with transport \"xmpp\": the service's own account, name@host".into(),
        ));
    }
    let jid = BareJid::new(&c.jid)
        .map_err(|e| bad(format!("jid {:?}: {e}: an account is name@host", c.jid)))?;
    if jid.node().is_none() {
        return Err(bad(format!(
            "jid {:?}: needs a local part (name@host)",
            c.jid
        )));
    }
    if c.password.is_empty() {
        return Err(bad("password: required with transport \"xmpp\"".into()));
    }
    let host = if c.server.is_empty() {
        None
    } else {
        Some(server(&c.server).map_err(bad)?.0)
    };
    let loopback = host.as_deref().is_some_and(|h| {
        h == "localhost"
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    if !c.tls && !loopback {
        return Err(bad(
            "tls: false sends the password in clear; allowed only with a loopback server".into(),
        ));
    }
    Ok(())
}

/// `host:port` of the `server` override.
pub(super) fn server(s: &str) -> std::result::Result<(String, u16), String> {
    let (host, port) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("server {s:?}: use host:port"))?;
    let port: u16 = port
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("server {s:?}: bad port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("server {s:?}: bad host"));
    }
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_checked_without_connecting() {
        let ok = XmppConfig {
            transport: XmppTransport::Xmpp,
            jid: "digestd@localhost".into(),
            password: "pw".into(),
            server: "127.0.0.1:5222".into(),
            ..XmppConfig::default()
        };
        check(&ok).unwrap();
        let bad = [
            XmppConfig {
                jid: "localhost".into(),
                ..ok.clone()
            },
            XmppConfig {
                jid: "a@b@c".into(),
                ..ok.clone()
            },
            XmppConfig {
                password: String::new(),
                ..ok.clone()
            },
            XmppConfig {
                password: "a\r\nb".into(),
                ..ok.clone()
            },
            XmppConfig {
                server: "127.0.0.1".into(),
                ..ok.clone()
            },
            XmppConfig {
                server: "127.0.0.1:0".into(),
                ..ok.clone()
            },
            XmppConfig {
                server: "127.0.0.1:99999".into(),
                ..ok.clone()
            },
            XmppConfig {
                timeout_seconds: 0,
                ..ok.clone()
            },
            XmppConfig {
                max_chars: 5,
                ..ok.clone()
            },
            XmppConfig {
                tls: false,
                server: "chat.example.com:5222".into(),
                ..ok.clone()
            },
            XmppConfig {
                tls: false,
                server: String::new(),
                ..ok.clone()
            },
        ];
        for server in ["127.0.0.1:5222", "[::1]:5222", "localhost:15222"] {
            check(&XmppConfig {
                tls: false,
                server: server.into(),
                ..ok.clone()
            })
            .unwrap();
        }
        for c in bad {
            let e = check(&c).unwrap_err().to_string();
            assert!(e.starts_with("config: xmpp."), "{e}");
        }
    }
}
