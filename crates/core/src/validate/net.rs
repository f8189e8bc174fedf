//! IP networks, as `[http] trusted_proxies` names them: `203.0.113.7`,
//! `10.0.0.0/8`, `::1`, `2001:db8::/32`, comma-separated.

use std::net::IpAddr;

use crate::error::{Invalid, Result};

/// An address and how many of its leading bits a match must share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    pub fn contains(&self, ip: &IpAddr) -> bool {
        // An IPv4 client reaching an IPv6 socket shows as ::ffff:a.b.c.d.
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(*ip, IpAddr::V4),
            v4 => *v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => same_prefix(
                u128::from(u32::from(net)) << 96,
                u128::from(u32::from(ip)) << 96,
                self.prefix,
            ),
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                same_prefix(u128::from(net), u128::from(ip), self.prefix)
            }
            _ => false,
        }
    }
}

fn same_prefix(a: u128, b: u128, prefix: u8) -> bool {
    prefix == 0 || (a ^ b) >> (128 - u32::from(prefix)) == 0
}

/// The block a client address is counted in: its IPv4 /24
/// (`203.0.113.0/24`) or IPv6 /64 (`2001:db8:1:2::/64`). One person
/// usually holds a whole /64, and a /24 is what one small network hands
/// out, so limits per block are not dodged by taking the next address.
/// An IPv4 client on an IPv6 socket (`::ffff:a.b.c.d`) is its IPv4 block.
pub fn client_block(ip: IpAddr) -> String {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            format!("{a}.{b}.{c}.0/24")
        }
        IpAddr::V6(v6) => {
            let net = u128::from(v6) & !((1u128 << 64) - 1);
            format!("{}/64", std::net::Ipv6Addr::from(net))
        }
    }
}

/// One network: an address, or an address and a prefix length.
pub fn ip_net(s: &str) -> Result<IpNet> {
    let bad = || {
        Invalid::new(format!(
            "{} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8, ::1)",
            crate::validate::quoted(s)
        ))
    };
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let addr: IpAddr = addr.parse().map_err(|_| bad())?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        None => max,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.len() <= 3 => {
            p.parse::<u8>().map_err(|_| bad())?
        }
        Some(_) => return Err(bad()),
    };
    if prefix > max {
        return Err(bad());
    }
    Ok(IpNet { addr, prefix })
}

/// A comma-separated list of networks; empty is none.
pub fn ip_nets(s: &str) -> Result<Vec<IpNet>> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(ip_net)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn clients_are_counted_by_their_block() {
        assert_eq!(client_block(ip("203.0.113.7")), "203.0.113.0/24");
        assert_eq!(client_block(ip("203.0.113.250")), "203.0.113.0/24");
        assert_ne!(client_block(ip("203.0.114.7")), "203.0.113.0/24");
        assert_eq!(client_block(ip("::ffff:203.0.113.9")), "203.0.113.0/24");
        assert_eq!(
            client_block(ip("2001:db8:1:2:aaaa::1")),
            "2001:db8:1:2::/64"
        );
        assert_eq!(
            client_block(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")),
            "2001:db8:1:2::/64"
        );
        assert_eq!(client_block(ip("2001:db8:1:3::1")), "2001:db8:1:3::/64");
        assert_eq!(client_block(ip("::1")), "::/64");
    }

    #[test]
    fn networks_contain_what_they_should() {
        let nets = ip_nets("127.0.0.1, 10.0.0.0/8, 2001:db8::/32, 0.0.0.0/0").unwrap();
        assert!(nets[0].contains(&ip("127.0.0.1")));
        assert!(!nets[0].contains(&ip("127.0.0.2")));
        assert!(nets[0].contains(&ip("::ffff:127.0.0.1")), "mapped IPv4");
        assert!(nets[1].contains(&ip("10.255.0.1")));
        assert!(!nets[1].contains(&ip("11.0.0.1")));
        assert!(nets[2].contains(&ip("2001:db8:ffff::1")));
        assert!(!nets[2].contains(&ip("2001:db9::1")));
        assert!(!nets[2].contains(&ip("10.0.0.1")), "no family crosses");
        assert!(
            nets[3].contains(&ip("198.51.100.1")),
            "/0 is everything of v4"
        );
        assert!(!nets[3].contains(&ip("::2")));
        assert_eq!(ip_nets("").unwrap(), vec![]);
        assert_eq!(ip_nets(" , ").unwrap(), vec![]);
    }

    #[test]
    fn hostile_networks_are_refused_in_one_line() {
        for bad in [
            "localhost",
            "10.0.0.0/33",
            "::1/129",
            "10.0.0.0/",
            "10.0.0.0/-1",
            "10.0.0.0/+8",
            "10.0.0.0/0008",
            "10.0.0.1/8/8",
            "1.2.3.4\r\nX-Evil: 1",
            "1.2.3",
            "[::1]",
            "127.0.0.1:80",
        ] {
            let e = ip_nets(&format!("127.0.0.1, {bad}"))
                .unwrap_err()
                .to_string();
            assert!(!e.contains('\n') && !e.contains('\r'), "{e:?}");
            assert!(e.contains("not an IP address"), "{e}");
        }
    }
}
