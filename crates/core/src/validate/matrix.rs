//! Matrix addresses, as the client-server specification's appendix writes
//! them: a user ID `@localpart:server_name` or a room ID
//! `!opaque_id:server_name` (from room version 12, `!opaque_id` alone), and the homeserver URL digestd's service
//! account talks to.
//!
//! A user ID's localpart is `[a-z0-9._=\-/+]` for new IDs; the spec's
//! historical grammar (any printable ASCII but `:`) is accepted too, since
//! such accounts still exist. Nothing else is: no white space, no control
//! character, no empty part, no more than 255 bytes in all.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::error::RefusalKind as Kind;
use crate::error::{Invalid, Result};

/// The most bytes of a user or room ID, sigil and server name included.
pub const MAX_MATRIX_ID: usize = 255;

/// A Matrix user ID (`@alice:example.org`) or room ID
/// (`!opaque:example.org`), checked and returned as given: the spec's
/// IDs are case-sensitive.
pub fn matrix_id(s: &str) -> Result<String> {
    let shown = || super::quoted(&s.chars().take(80).collect::<String>());
    let bad = |why: &str, kind: Kind| {
        Invalid::new(format!(
            "invalid Matrix ID {}: {why} (use @user:server or !room:server)",
            shown()
        ))
        .because(kind, s)
    };
    if s.is_empty() {
        return Err(bad("it is empty", Kind::MatrixEmpty));
    }
    if s.len() > MAX_MATRIX_ID {
        return Err(bad(
            &format!("it is longer than {MAX_MATRIX_ID} bytes"),
            Kind::MatrixTooLong { max: MAX_MATRIX_ID },
        ));
    }
    if let Some(c) = s.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(if c.is_whitespace() {
            bad("it contains white space", Kind::MatrixSpace)
        } else {
            bad(
                "it contains a control or non-ASCII character",
                Kind::MatrixChar,
            )
        });
    }
    let (sigil, rest) = s.split_at(1);
    // Historical localparts: printable ASCII but `:` (the split takes the
    // first one, so there is none before it).
    let (local, server) = match (sigil, rest.split_once(':')) {
        (_, Some((l, srv))) => (l, Some(srv)),
        // Room version 12 room IDs are a hash alone, with no server.
        ("!", None) => (rest, None),
        (_, None) => return Err(bad("it names no server (:server)", Kind::MatrixNoServer)),
    };
    if local.is_empty() {
        return Err(bad("its local part is empty", Kind::MatrixNoLocal));
    }
    if sigil != "@" && sigil != "!" {
        return Err(bad(
            "it starts with neither @ (a user) nor ! (a room)",
            Kind::MatrixSigil,
        ));
    }
    if let Some(server) = server {
        server_name(server).map_err(|(why, kind)| bad(&why, kind))?;
    }
    Ok(s.to_string())
}

/// Whether `id` (already checked by [`matrix_id`]) names a room, not a user.
pub fn is_matrix_room(id: &str) -> bool {
    id.starts_with('!')
}

/// Whether `local` is a localpart as new user IDs write it.
pub fn is_new_localpart(local: &str) -> bool {
    !local.is_empty()
        && local.bytes().all(
            |b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'=' | b'-' | b'/' | b'+'),
        )
}

/// A server name: a DNS name, an IPv4 address or a bracketed IPv6
/// address, with an optional `:port` (1-65535).
fn server_name(s: &str) -> std::result::Result<(), (String, Kind)> {
    let no = |why: &str| (why.to_string(), Kind::MatrixServer);
    if s.is_empty() {
        return Err(no("its server name is empty"));
    }
    let (host, port) = if let Some(v6) = s.strip_prefix('[') {
        let (addr, after) = v6
            .split_once(']')
            .ok_or_else(|| no("its IPv6 server name lacks a ]"))?;
        addr.parse::<Ipv6Addr>()
            .map_err(|_| no("its IPv6 server name is no address"))?;
        match after {
            "" => (s, None),
            p => (
                s,
                Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| no("junk after its IPv6 server name"))?,
                ),
            ),
        }
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if let Some(p) = port {
        let ok = !p.is_empty()
            && p.len() <= 5
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n));
        if !ok {
            return Err(("its server's port is not 1-65535".into(), Kind::MatrixPort));
        }
    }
    if host.starts_with('[') {
        return Ok(());
    }
    if host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return host
            .parse::<Ipv4Addr>()
            .map(|_| ())
            .map_err(|_| no("its server name is no IPv4 address"));
    }
    let labels: Vec<&str> = host.trim_end_matches('.').split('.').collect();
    if host.len() > 255 || !labels.iter().all(|l| super::is_dns_label(l)) {
        return Err(no("its server name is not a host name"));
    }
    Ok(())
}

/// The homeserver's base URL (`[matrix] homeserver`): `https`, or plain
/// `http` to a loopback address when `allow_http` says so; no
/// credentials, query or fragment. Returned without a trailing `/`.
pub fn homeserver_url(s: &str, allow_http: bool) -> Result<String> {
    let bad = |why: &str| {
        Invalid::new(format!(
            "invalid homeserver {}: {why}",
            super::quoted(&s.chars().take(80).collect::<String>())
        ))
    };
    if s.is_empty() {
        return Err(bad("it is empty: the homeserver's https:// URL"));
    }
    if let Some(what) = super::link::bad_char(s) {
        return Err(bad(&format!("it contains {what}")));
    }
    let u = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
    let loopback = match u.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => return Err(bad("it names no host")),
    };
    match u.scheme() {
        "https" => {}
        "http" if allow_http && loopback => {}
        "http" if allow_http => return Err(bad("plain http is for a loopback homeserver only")),
        "http" => return Err(bad("use https (plain http is off: [matrix] allow_http)")),
        _ => return Err(bad("use an https URL")),
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(bad("it carries credentials (user:password@)"));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(bad("it has a query or a fragment"));
    }
    Ok(u.as_str().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_room_ids_as_the_spec_writes_them() {
        for ok in [
            "@alice:example.org",
            "@a.b_c=d-e/f+g:matrix.example.org:8448",
            "@Historical!User~:example.org",
            "@bob:127.0.0.1",
            "@bob:[::1]:8008",
            "@bob:localhost",
            "!abcDEF123:example.org",
            "!bBtp49AVHkMYa9K97NXuDIYxJK3m_zdgalukuUoGczw",
        ] {
            assert_eq!(matrix_id(ok).unwrap(), ok);
        }
        assert!(is_new_localpart("a.b_c=d-e/f+g"));
        assert!(!is_new_localpart("Alice"));
        assert!(is_matrix_room("!x:y") && !is_matrix_room("@x:y"));
    }

    #[test]
    fn hostile_ids_are_refused_with_one_line() {
        let long = format!("@{}:example.org", "a".repeat(250));
        for bad in [
            "",
            "@",
            "alice:example.org",
            "#room:example.org",
            "@:example.org",
            "@alice",
            "@alice:",
            "@alice :example.org",
            " @alice:example.org",
            "@alice:example.org\n",
            "@alice:example.org\r\nX-Injected: 1",
            "@ali\u{0}ce:example.org",
            "@alice\u{7f}:example.org",
            "@alicé:example.org",
            "@alice:exa mple.org",
            "@alice:-bad-.org",
            "@alice:example.org:0",
            "@alice:example.org:65536",
            "@alice:example.org:",
            "@alice:example.org:80:80",
            "@alice:[::1",
            "@alice:[nope]",
            "@alice:[::1]x",
            "@alice:999.1.1.1",
            "@alice:exa_mple.org",
            "!:example.org",
            "!",
            "!abc:",
            long.as_str(),
        ] {
            let e = matrix_id(bad).unwrap_err().to_string();
            assert!(!e.contains('\n') && !e.contains('\r'), "{bad:?}: {e}");
            assert!(e.starts_with("invalid Matrix ID"), "{bad:?}: {e}");
        }
        // 255 bytes exactly is allowed.
        let edge = format!("@{}:example.org", "a".repeat(255 - 13));
        assert_eq!(edge.len(), 255);
        assert!(matrix_id(&edge).is_ok());
    }

    #[test]
    fn homeservers_are_https_or_loopback_http_when_allowed() {
        assert_eq!(
            homeserver_url("https://matrix.example.org/", false).unwrap(),
            "https://matrix.example.org"
        );
        assert_eq!(
            homeserver_url("http://127.0.0.1:8008", true).unwrap(),
            "http://127.0.0.1:8008"
        );
        assert!(homeserver_url("http://localhost:8008", true).is_ok());
        for (bad, allow) in [
            ("http://127.0.0.1:8008", false),
            ("http://matrix.example.org", true),
            ("ftp://matrix.example.org", true),
            ("https://u:p@matrix.example.org", false),
            ("https://matrix.example.org/?x=1", false),
            ("https://matrix.example.org/#x", false),
            ("https://matrix.example.org/\r\nX: 1", false),
            ("", false),
            ("matrix.example.org", false),
        ] {
            let e = homeserver_url(bad, allow).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{bad:?}: {e}");
        }
    }
}
