//! DKIM signing (RFC 6376; Ed25519 per RFC 8463) of every email digestd
//! sends: `[email] dkim_domain`, `dkim_selector` and `dkim_key` (a PEM
//! file) together, or none of them. The key is read and checked once, at
//! start-up ([`super::check_settings`]) and when a [`super::queue::Delivery`]
//! is made; [`super::message::build`] signs with it.
//!
//! Keys: RSA as PKCS#1 (`BEGIN RSA PRIVATE KEY`) or PKCS#8 (`BEGIN PRIVATE
//! KEY`, what `openssl genpkey` writes), 2048 bits or more; Ed25519 as
//! PKCS#8. Signed with relaxed/relaxed canonicalization over From, To,
//! Subject, Date, Message-ID, MIME-Version and the List-Unsubscribe
//! headers (listed even when absent, so none can be added
//! in transit unnoticed).

use std::sync::Arc;

use base64::Engine;
use lettre::message::dkim::{
    DkimCanonicalization, DkimCanonicalizationType, DkimConfig, DkimSigningAlgorithm,
    DkimSigningKey,
};
use lettre::message::header::HeaderName;

use crate::config::EmailConfig;
use crate::error::{Error, Result};

/// The signing settings, shared by the threads that build messages.
pub type Signer = Arc<DkimConfig>;

/// The headers every signature covers. Not Content-Type: lettre writes a
/// multipart's with the body, after signing, so it cannot cover it.
const SIGNED: [&str; 8] = [
    "From",
    "To",
    "Subject",
    "Date",
    "Message-ID",
    "MIME-Version",
    "List-Unsubscribe",
    "List-Unsubscribe-Post",
];

/// The signer of `[email]`, `None` when DKIM is off; bad settings or a bad
/// key file are refused with one line.
pub fn load(cfg: &EmailConfig) -> Result<Option<Signer>> {
    let (d, s, k) = (
        cfg.dkim_domain.trim(),
        cfg.dkim_selector.trim(),
        cfg.dkim_key.trim(),
    );
    if d.is_empty() && s.is_empty() && k.is_empty() {
        return Ok(None);
    }
    if d.is_empty() || s.is_empty() || k.is_empty() {
        return Err(Error::invalid(
            "config: email.dkim_domain, dkim_selector and dkim_key go together (all three, or none)",
        ));
    }
    check_domain("email.dkim_domain", d)?;
    check_label("email.dkim_selector", s)?;
    let pem = std::fs::read_to_string(k)
        .map_err(|e| Error::invalid(format!("config: email.dkim_key: cannot read {k:?}: {e}")))?;
    let key = signing_key(&pem)
        .map_err(|why| Error::invalid(format!("config: email.dkim_key {k:?}: {why}")))?;
    let headers = SIGNED
        .iter()
        .map(|h| HeaderName::new_from_ascii_str(h))
        .collect();
    Ok(Some(Arc::new(DkimConfig::new(
        s.to_string(),
        d.to_ascii_lowercase(),
        key,
        headers,
        DkimCanonicalization {
            header: DkimCanonicalizationType::Relaxed,
            body: DkimCanonicalizationType::Relaxed,
        },
    ))))
}

/// A DNS name of letters, digits and hyphens in dot-separated labels.
fn check_domain(what: &str, d: &str) -> Result<()> {
    if d.len() > 253 || !d.contains('.') {
        return Err(Error::invalid(format!(
            "config: {what} {d:?} is not a domain name"
        )));
    }
    d.split('.').try_for_each(|l| check_label(what, l))
}

/// One DNS label (a selector may itself contain dots: each part is one).
fn check_label(what: &str, s: &str) -> Result<()> {
    let ok = s.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    });
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "config: {what} {s:?}: letters, digits and hyphens in dot-separated labels"
        )))
    }
}

/// The PEM's one block: its label and DER bytes.
fn pem_block(pem: &str) -> std::result::Result<(String, Vec<u8>), String> {
    let begin = pem
        .lines()
        .position(|l| l.starts_with("-----BEGIN "))
        .ok_or("not a PEM file (no BEGIN line)")?;
    let lines: Vec<&str> = pem.lines().skip(begin).collect();
    let label = lines[0]
        .trim()
        .trim_start_matches("-----BEGIN ")
        .trim_end_matches("-----")
        .to_string();
    let end = lines
        .iter()
        .position(|l| l.starts_with("-----END "))
        .ok_or("not a PEM file (no END line)")?;
    let b64: String = lines[1..end].iter().map(|l| l.trim()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| format!("bad base64 in the PEM: {e}"))?;
    Ok((label, der))
}

/// One DER element at the start of `b`: tag, contents, the rest.
fn der(b: &[u8]) -> std::result::Result<(u8, &[u8], &[u8]), String> {
    let bad = || "malformed DER".to_string();
    let (&tag, rest) = b.split_first().ok_or_else(bad)?;
    let (&first, mut rest) = rest.split_first().ok_or_else(bad)?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return Err(bad());
        }
        let l = rest[..n]
            .iter()
            .fold(0usize, |a, &x| (a << 8) | usize::from(x));
        rest = &rest[n..];
        l
    };
    if rest.len() < len {
        return Err(bad());
    }
    Ok((tag, &rest[..len], &rest[len..]))
}

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];

fn signing_key(pem: &str) -> std::result::Result<DkimSigningKey, String> {
    let (label, der_bytes) = pem_block(pem)?;
    let pkcs1 = match label.as_str() {
        "RSA PRIVATE KEY" => der_bytes,
        "PRIVATE KEY" => {
            // PKCS#8: SEQUENCE { version, SEQUENCE { OID, … }, OCTET STRING key }
            let (_, info, _) = der(&der_bytes)?;
            let (_, _version, rest) = der(info)?;
            let (_, alg, rest) = der(rest)?;
            let (_, oid, _) = der(alg)?;
            let (tag, key, _) = der(rest)?;
            if tag != 0x04 {
                return Err("malformed PKCS#8 key".into());
            }
            if oid == OID_ED25519 {
                // The key is itself an OCTET STRING of the 32-byte seed.
                let (_, seed, _) = der(key)?;
                if seed.len() != 32 {
                    return Err("an Ed25519 key must be 32 bytes".into());
                }
                let b64 = base64::engine::general_purpose::STANDARD.encode(seed);
                return DkimSigningKey::new(&b64, DkimSigningAlgorithm::Ed25519)
                    .map_err(|e| format!("bad Ed25519 key: {e}"));
            }
            if oid != OID_RSA {
                return Err("only RSA and Ed25519 keys can sign DKIM".into());
            }
            key.to_vec()
        }
        other => return Err(format!("a PEM {other:?} is not a private key")),
    };
    // RSAPrivateKey: SEQUENCE { version, modulus, … }
    let (_, seq, _) = der(&pkcs1)?;
    let (_, _version, rest) = der(seq)?;
    let (_, modulus, _) = der(rest)?;
    let bits = modulus
        .iter()
        .position(|&b| b != 0)
        .map_or(0, |i| (modulus.len() - i) * 8);
    if bits < 2048 {
        return Err(format!(
            "an RSA key of {bits} bits is too weak for DKIM (2048 or more)"
        ));
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(&pkcs1);
    let mut pem = String::from("-----BEGIN RSA PRIVATE KEY-----\n");
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        pem.push('\n');
    }
    pem.push_str("-----END RSA PRIVATE KEY-----\n");
    DkimSigningKey::new(&pem, DkimSigningAlgorithm::Rsa).map_err(|e| format!("bad RSA key: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(d: &str, s: &str, k: &str) -> EmailConfig {
        EmailConfig {
            dkim_domain: d.into(),
            dkim_selector: s.into(),
            dkim_key: k.into(),
            ..EmailConfig::default()
        }
    }

    #[test]
    fn settings_go_together_and_hostile_values_are_refused() {
        assert!(load(&cfg("", "", "")).unwrap().is_none());
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "hello").unwrap();
        let weak = dir.path().join("weak.pem");
        // A PKCS#1 header over a 512-bit modulus (only its length is read).
        let mut der = vec![0x30, 0x48, 0x02, 0x01, 0x00, 0x02, 0x41, 0x00];
        der.extend([0xc3; 64]);
        der.extend([0x02, 0x01, 0x03]);
        let b64 = base64::engine::general_purpose::STANDARD.encode(&der);
        std::fs::write(
            &weak,
            format!("-----BEGIN RSA PRIVATE KEY-----\n{b64}\n-----END RSA PRIVATE KEY-----\n"),
        )
        .unwrap();
        let cert = dir.path().join("cert.pem");
        std::fs::write(
            &cert,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let (j, w, c) = (
            junk.to_str().unwrap(),
            weak.to_str().unwrap(),
            cert.to_str().unwrap(),
        );
        for (d, s, k, says) in [
            ("example.org", "", "", "go together"),
            ("", "s1", j, "go together"),
            ("example.org", "s1", "/nonexistent/key.pem", "cannot read"),
            ("example.org", "s1", j, "not a PEM"),
            ("example.org", "s1", w, "512 bits is too weak"),
            ("example.org", "s1", c, "not a private key"),
            ("example.org\r\nX: y", "s1", j, "letters, digits"),
            ("localhost", "s1", j, "not a domain"),
            ("example.org", "s 1", j, "dot-separated"),
            ("example.org", "-s", j, "dot-separated"),
            ("exa_mple.org", "s1", j, "letters, digits"),
        ] {
            let e = load(&cfg(d, s, k)).unwrap_err();
            assert!(e.is_bad_input(), "{e}");
            let msg = e.to_string();
            assert!(msg.contains(says), "{d:?} {s:?} {k:?}: {msg}");
            assert!(!msg.contains('\n'), "one line: {msg}");
        }
    }
}
