//! Where a webhook may be posted: the URL checked against `[webhook]`'s
//! policy once more (settings may have tightened since it was set), its
//! name resolved here, each address checked, and the connection pinned to
//! the addresses checked, so a name that resolves to a public address for
//! the check and to an internal one for the connection (DNS rebinding)
//! reaches nothing inside.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::validate::{self, UrlPolicy};

use super::Error;

/// A URL allowed to be posted to: its host name (for pinning) and the
/// addresses the connection may use.
#[derive(Debug)]
pub struct Target {
    pub url: url::Url,
    /// The name to pin, when the host is a name and not an address.
    pub name: Option<String>,
    pub addrs: Vec<SocketAddr>,
}

/// Checks `url` under `policy` and resolves it: a URL the policy refuses,
/// or a name that resolves to no address it allows, is permanent; a name
/// that does not resolve now is transient.
pub fn target(url: &str, policy: UrlPolicy) -> Result<Target, Error> {
    let checked = validate::webhook_url(url, policy).map_err(|e| Error::Target(e.to_string()))?;
    let url = url::Url::parse(&checked).map_err(|e| Error::Target(format!("webhook url: {e}")))?;
    let port = url.port_or_known_default().unwrap_or(443);
    let (name, found): (Option<String>, Vec<SocketAddr>) = match url.host() {
        Some(url::Host::Ipv4(a)) => (None, vec![SocketAddr::new(a.into(), port)]),
        Some(url::Host::Ipv6(a)) => (None, vec![SocketAddr::new(a.into(), port)]),
        Some(url::Host::Domain(d)) => {
            let found = (d, port)
                .to_socket_addrs()
                .map_err(|e| Error::Unresolved {
                    host: d.to_string(),
                    why: e.to_string(),
                })?
                .collect();
            (Some(d.to_string()), found)
        }
        None => return Err(Error::Target("webhook url names no host".into())),
    };
    let mut refused = None;
    let addrs: Vec<SocketAddr> = found
        .into_iter()
        .filter(|a| match validate::why_not_public(a.ip()) {
            Some(why) if !policy.allow_private => {
                refused = Some((a.ip(), why));
                false
            }
            _ => true,
        })
        .collect();
    if addrs.is_empty() {
        return Err(Error::Target(match (refused, &name) {
            (Some((ip, why)), Some(n)) => format!(
                "webhook: {n} resolves to {ip}, {why}: refused (allowed only with [webhook] allow_private)"
            ),
            (Some((ip, why)), None) => format!("webhook: {ip} is {why}: refused"),
            (None, _) => "webhook: the host resolves to no address".into(),
        }));
    }
    Ok(Target { url, name, addrs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_resolves_to_loopback_is_refused_unless_allowed() {
        let strict = UrlPolicy::default();
        let e = target("https://localhost.:8443/x", strict).unwrap_err();
        assert!(matches!(e, Error::Target(_)), "{e:?}");
        let ok = target("http://localhost:8443/x", UrlPolicy::ANY).unwrap();
        assert!(ok.addrs.iter().all(|a| a.ip().is_loopback()));
        assert_eq!(ok.name.as_deref(), Some("localhost"));
        let ip = target("http://127.0.0.1:9/x", UrlPolicy::ANY).unwrap();
        assert_eq!(ip.name, None);
    }
}
