//! Who the client is: the socket's peer, or — when that peer is a reverse
//! proxy named in `[http] trusted_proxies` — the address it says it
//! forwarded for. The sign-up limits and the admin login's failure count
//! are kept per client address; behind a proxy without this every visitor
//! is the proxy, and one busy hour of sign-ups locks everyone out.
//!
//! `X-Forwarded-For` is read right to left, as each proxy appends the
//! address it received from: trusted proxies are skipped, and the first
//! address that is not one is the client. A header from an untrusted
//! peer is never read (anyone can send one), and an entry that is not an
//! IP address stops the walk at the hop that added it.

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::{Extensions, HeaderMap};

use crate::validate::IpNet;

/// The client's address, `None` when the request came without a socket
/// (a router driven in a test).
pub fn address(ext: &Extensions, headers: &HeaderMap, trusted: &[IpNet]) -> Option<IpAddr> {
    let peer = ext.get::<ConnectInfo<SocketAddr>>()?.0.ip();
    Some(forwarded_for(peer, headers, trusted))
}

fn forwarded_for(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|n| n.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let mut client = peer;
    // Several headers are one list, in order.
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    for hop in hops.iter().rev() {
        let Ok(ip) = hop.trim().parse::<IpAddr>() else {
            break;
        };
        client = ip;
        if !is_trusted(&ip) {
            break;
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::ip_nets;

    fn with(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append("x-forwarded-for", v.parse().unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_client_behind_trusted_proxies() {
        let trusted = ip_nets("127.0.0.1, 10.0.0.0/8, ::1").unwrap();
        let from_proxy = ip("127.0.0.1");
        // One proxy: the address it appended.
        assert_eq!(
            forwarded_for(from_proxy, &with(&["203.0.113.7"]), &trusted),
            ip("203.0.113.7")
        );
        // What the client wrote itself comes first and is skipped over:
        // the right-most untrusted hop counts.
        assert_eq!(
            forwarded_for(
                from_proxy,
                &with(&["1.2.3.4, 203.0.113.7, 10.1.2.3"]),
                &trusted
            ),
            ip("203.0.113.7")
        );
        // Two headers are one list.
        assert_eq!(
            forwarded_for(from_proxy, &with(&["1.2.3.4", "198.51.100.9"]), &trusted),
            ip("198.51.100.9")
        );
        // IPv6, with spaces.
        assert_eq!(
            forwarded_for(ip("::1"), &with(&[" 2001:db8::5 "]), &trusted),
            ip("2001:db8::5")
        );
        // No header: the proxy itself.
        assert_eq!(
            forwarded_for(from_proxy, &HeaderMap::new(), &trusted),
            from_proxy
        );
        // Every hop trusted: the left-most one.
        assert_eq!(
            forwarded_for(from_proxy, &with(&["10.0.0.9"]), &trusted),
            ip("10.0.0.9")
        );
    }

    #[test]
    fn hostile_headers_do_not_pick_the_client() {
        let trusted = ip_nets("127.0.0.1").unwrap();
        // An untrusted peer's header is never read.
        let stranger = ip("198.51.100.1");
        assert_eq!(
            forwarded_for(stranger, &with(&["127.0.0.1"]), &trusted),
            stranger
        );
        assert_eq!(
            forwarded_for(stranger, &with(&["203.0.113.7"]), &trusted),
            stranger
        );
        // Nothing trusted (the default): the peer, whatever the header.
        assert_eq!(
            forwarded_for(ip("127.0.0.1"), &with(&["203.0.113.7"]), &[]),
            ip("127.0.0.1")
        );
        // Garbage stops the walk at the hop that added it.
        for bad in [
            "evil, 203.0.113.7x",
            "unknown",
            "",
            "203.0.113.7:80",
            "1.2.3.4\u{0}",
        ] {
            let mut h = HeaderMap::new();
            if let Ok(v) = bad.parse() {
                h.append("x-forwarded-for", v);
            }
            assert_eq!(
                forwarded_for(ip("127.0.0.1"), &h, &trusted),
                ip("127.0.0.1"),
                "{bad:?}"
            );
        }
        // A garbage entry left of a good one: the good one counts.
        assert_eq!(
            forwarded_for(ip("127.0.0.1"), &with(&["junk, 203.0.113.7"]), &trusted),
            ip("203.0.113.7")
        );
    }
}
