//! A webhook contact point's URL, and which addresses digestd may post to.
//! A digest scheduler must not become a tool for reaching hosts behind its
//! own firewall (SSRF): a URL naming a loopback, private, link-local,
//! unique-local, unspecified, multicast, CGNAT, documentation or other
//! special-purpose address, or a `localhost` name, is refused unless the
//! operator allows private targets; the addresses a name resolves to are
//! checked again when a message is sent (`deliver::webhook`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::{Invalid, Result};

/// Longest webhook URL accepted, in bytes (before and after normalising).
pub const MAX_WEBHOOK_URL: usize = 2000;

/// What the operator allows a webhook URL to be (`[webhook] allow_http`,
/// `allow_private`); both off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// Plain `http://` as well as `https://`.
    pub allow_http: bool,
    /// Loopback, private and other non-public targets.
    pub allow_private: bool,
}

impl UrlPolicy {
    /// Everything the syntax allows: what the stored address is checked
    /// against before the operator's policy is known.
    pub const ANY: UrlPolicy = UrlPolicy {
        allow_http: true,
        allow_private: true,
    };
}

/// A webhook URL: absolute `https` (or `http` when `policy` allows it)
/// with a host, no credentials, no fragment, no whitespace or control
/// character, at most [`MAX_WEBHOOK_URL`] bytes, and a public target
/// unless `policy` allows private ones. Returned normalised as the URL
/// standard writes it (`http://127.1` is `http://127.0.0.1/`).
pub fn webhook_url(s: &str, policy: UrlPolicy) -> Result<String> {
    let shown = || super::quoted(&s.chars().take(80).collect::<String>());
    let bad = |why: &str| Invalid::new(format!("invalid webhook url {}: {why}", shown()));
    if s.len() > MAX_WEBHOOK_URL {
        return Err(Invalid::new(format!(
            "webhook url is longer than {MAX_WEBHOOK_URL} bytes"
        )));
    }
    if let Some(what) = super::link::bad_char(s) {
        return Err(bad(&format!("it contains {what}")));
    }
    let u = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
    match u.scheme() {
        "https" => {}
        "http" if policy.allow_http => {}
        "http" => return Err(bad("use https (plain http is off: [webhook] allow_http)")),
        _ => return Err(bad("use an https URL")),
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(bad("it carries credentials (user:password@)"));
    }
    if u.fragment().is_some() {
        return Err(bad("it has a fragment (#…), which is never sent"));
    }
    let host = match u.host() {
        Some(h) => h,
        None => return Err(bad("it names no host")),
    };
    if !policy.allow_private {
        let private = match host {
            url::Host::Ipv4(a) => why_not_public(IpAddr::V4(a)),
            url::Host::Ipv6(a) => why_not_public(IpAddr::V6(a)),
            url::Host::Domain(d) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                (d == "localhost" || d.ends_with(".localhost")).then_some("a localhost name")
            }
        };
        if let Some(why) = private {
            return Err(bad(&format!(
                "it names {why} (allowed only with [webhook] allow_private)"
            )));
        }
    }
    let out = u.to_string();
    if out.len() > MAX_WEBHOOK_URL {
        return Err(Invalid::new(format!(
            "webhook url is longer than {MAX_WEBHOOK_URL} bytes once encoded"
        )));
    }
    Ok(out)
}

/// Why `ip` is no public unicast address digestd may post to, or `None`
/// when it is one. IPv4 addresses inside IPv6 (mapped, compatible, NAT64,
/// 6to4) are judged as the IPv4 address they carry.
pub fn why_not_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(a) => v4_class(a),
        IpAddr::V6(a) => v6_class(a),
    }
}

fn v4_class(a: Ipv4Addr) -> Option<&'static str> {
    let o = a.octets();
    let in_net = |net: [u8; 4], bits: u32| {
        let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
        u32::from(a) & mask == u32::from(Ipv4Addr::from(net)) & mask
    };
    Some(match o {
        [0, ..] => "an unspecified address (0.0.0.0/8)",
        [127, ..] => "a loopback address",
        [10, ..] => "a private address (10.0.0.0/8)",
        [172, 16..=31, ..] => "a private address (172.16.0.0/12)",
        [192, 168, ..] => "a private address (192.168.0.0/16)",
        [169, 254, ..] => "a link-local address",
        _ if in_net([100, 64, 0, 0], 10) => "a shared CGNAT address (100.64.0.0/10)",
        [192, 0, 0, _] => "an IETF protocol address (192.0.0.0/24)",
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _] => "a documentation address",
        [198, 18..=19, ..] => "a benchmarking address (198.18.0.0/15)",
        [224..=239, ..] => "a multicast address",
        [240..=255, ..] => "a reserved or broadcast address",
        _ => return None,
    })
}

fn v6_class(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    let embedded = |hi: usize| {
        Ipv4Addr::new(
            (s[hi] >> 8) as u8,
            s[hi] as u8,
            (s[hi + 1] >> 8) as u8,
            s[hi + 1] as u8,
        )
    };
    if a.is_unspecified() {
        return Some("an unspecified address (::)");
    }
    if a.is_loopback() {
        return Some("a loopback address");
    }
    // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated).
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        let v4 = v4_class(embedded(6));
        return if s[5] == 0xffff {
            v4
        } else {
            v4.or(Some("an IPv4-compatible address (::/96)"))
        };
    }
    Some(match s[0] {
        // 64:ff9b::/96, NAT64: the IPv4 address it reaches.
        0x64 if s[1] == 0xff9b && s[2..6] == [0; 4] => return v4_class(embedded(6)),
        // 2002::/16, 6to4.
        0x2002 => return v4_class(embedded(1)),
        0x2001 if s[1] == 0x0db8 => "a documentation address (2001:db8::/32)",
        0x0100 if s[1..4] == [0; 3] => "a discard address (100::/64)",
        x if x & 0xfe00 == 0xfc00 => "a unique-local address (fc00::/7)",
        x if x & 0xffc0 == 0xfe80 => "a link-local address (fe80::/10)",
        x if x & 0xffc0 == 0xfec0 => "a site-local address (fec0::/10)",
        x if x & 0xff00 == 0xff00 => "a multicast address",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: UrlPolicy = UrlPolicy {
        allow_http: false,
        allow_private: false,
    };

    #[test]
    fn public_https_urls_are_kept_normalised() {
        assert_eq!(
            webhook_url("https://Hooks.Example.com/in?x=1", STRICT).unwrap(),
            "https://hooks.example.com/in?x=1"
        );
        assert_eq!(
            webhook_url("https://93.184.216.34:8443/h", STRICT).unwrap(),
            "https://93.184.216.34:8443/h"
        );
        assert_eq!(
            webhook_url("https://[2606:4700::1111]/h", STRICT).unwrap(),
            "https://[2606:4700::1111]/h"
        );
        // With both allowances, a loopback test server.
        assert_eq!(
            webhook_url("http://127.1:8080/h", UrlPolicy::ANY).unwrap(),
            "http://127.0.0.1:8080/h"
        );
    }

    #[test]
    fn hostile_urls_are_refused_in_one_line() {
        let long = format!("https://x.example/{}", "a".repeat(2001 - 18));
        assert_eq!(long.len(), 2001);
        let https_only = UrlPolicy {
            allow_http: true,
            ..STRICT
        };
        for (bad, why) in [
            ("", "relative URL"),
            ("hooks.example.com/x", "relative URL"),
            ("ftp://hooks.example.com/x", "use an https URL"),
            ("javascript:alert(1)", "use an https URL"),
            ("http://hooks.example.com/x", "allow_http"),
            ("https://user:pw@hooks.example.com/x", "credentials"),
            ("https://user@hooks.example.com/x", "credentials"),
            ("https://hooks.example.com/x#frag", "fragment"),
            ("https://hooks.example.com/x\r\nX-Evil: 1", "U+000D"),
            ("https://hooks.example.com/\nx", "U+000A"),
            ("https://hooks.example.com/\0", "NUL"),
            ("https://hooks.example.com/ x", "a space"),
            ("https://hooks.example.com/\tx", "U+0009"),
            ("https://hooks.example.com/\u{a0}x", "white space"),
            ("https://hooks.example.com/\u{202E}x", "bidirectional"),
            (long.as_str(), "longer than 2000"),
            ("https://127.0.0.1/x", "loopback"),
            ("https://127.1/x", "loopback"),
            ("https://0x7f000001/x", "loopback"),
            ("https://2130706433/x", "loopback"),
            ("https://0177.0.0.1/x", "loopback"),
            ("https://localhost/x", "localhost"),
            ("https://LocalHost./x", "localhost"),
            ("https://a.b.localhost/x", "localhost"),
            ("https://0.0.0.0/x", "unspecified"),
            ("https://10.1.2.3/x", "private"),
            ("https://172.16.0.1/x", "private"),
            ("https://172.31.255.255/x", "private"),
            ("https://192.168.1.1/x", "private"),
            ("https://169.254.169.254/latest/meta-data", "link-local"),
            ("https://100.64.0.1/x", "CGNAT"),
            ("https://100.127.255.254/x", "CGNAT"),
            ("https://192.0.2.1/x", "documentation"),
            ("https://198.51.100.7/x", "documentation"),
            ("https://203.0.113.9/x", "documentation"),
            ("https://224.0.0.1/x", "multicast"),
            ("https://255.255.255.255/x", "broadcast"),
            ("https://[::1]/x", "loopback"),
            ("https://[::]/x", "unspecified"),
            ("https://[::ffff:127.0.0.1]/x", "loopback"),
            ("https://[::ffff:7f00:1]/x", "loopback"),
            ("https://[::ffff:10.0.0.1]/x", "private"),
            ("https://[::ffff:169.254.169.254]/x", "link-local"),
            ("https://[::127.0.0.1]/x", "loopback"),
            ("https://[64:ff9b::a9fe:a9fe]/x", "link-local"),
            ("https://[2002:7f00:1::]/x", "loopback"),
            ("https://[fc00::1]/x", "unique-local"),
            ("https://[fd12:3456::1]/x", "unique-local"),
            ("https://[fe80::1]/x", "link-local"),
            ("https://[fec0::1]/x", "site-local"),
            ("https://[ff02::1]/x", "multicast"),
            ("https://[2001:db8::1]/x", "documentation"),
        ] {
            let e = webhook_url(bad, STRICT).expect_err(bad).to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(!e.contains('\n') && !e.contains('\r'), "{bad:?}: {e}");
        }
        // allow_http does not allow a private target, nor the reverse.
        assert!(webhook_url("http://127.0.0.1/x", https_only).is_err());
        let private_only = UrlPolicy {
            allow_private: true,
            ..STRICT
        };
        assert!(webhook_url("http://127.0.0.1/x", private_only).is_err());
        assert!(webhook_url("https://127.0.0.1/x", private_only).is_ok());
    }

    #[test]
    fn public_addresses_pass_the_resolved_check() {
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(why_not_public(ip.parse().unwrap()), None, "{ip}");
        }
        for ip in [
            "127.0.0.53",
            "::1",
            "::ffff:192.168.0.1",
            "fe80::2",
            "100.100.100.100",
        ] {
            assert!(why_not_public(ip.parse().unwrap()).is_some(), "{ip}");
        }
    }
}
