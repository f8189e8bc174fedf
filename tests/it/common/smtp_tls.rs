//! An SMTP server on loopback with STARTTLS (optional) and AUTH PLAIN, for
//! the `[email] tls` modes: a self-signed certificate for `localhost` and
//! 127.0.0.1 made at start by the openssl command, which a test may trust
//! through `tls_ca_file`. Every accepted message is recorded with whether
//! its session was encrypted.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;

pub const USER: &str = "bob";
pub const PASSWORD: &str = "s3cret";

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

#[derive(Debug, Clone)]
pub struct Received {
    pub rcpt: String,
    pub tls: bool,
}

pub struct TlsSmtp {
    pub port: u16,
    /// The server's certificate (PEM), for `tls_ca_file`.
    pub cert: PathBuf,
    received: Arc<Mutex<Vec<Received>>>,
    _dir: tempfile::TempDir,
}

impl TlsSmtp {
    /// A server that offers STARTTLS when `starttls`, and AUTH PLAIN for
    /// [`USER`] / [`PASSWORD`] always.
    pub fn start(starttls: bool) -> TlsSmtp {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        let ok = std::process::Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=localhost"])
            .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .expect("the openssl command (Debian: openssl)");
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
        let identity = native_tls::Identity::from_pkcs8(
            &std::fs::read(&cert).unwrap(),
            &std::fs::read(&key).unwrap(),
        )
        .unwrap();
        let acceptor = starttls.then(|| Arc::new(native_tls::TlsAcceptor::new(identity).unwrap()));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let rec = received.clone();
        thread::spawn(move || {
            for s in listener.incoming().flatten() {
                let (rec, acceptor) = (rec.clone(), acceptor.clone());
                thread::spawn(move || {
                    let _ = session(s, &rec, acceptor.as_deref());
                });
            }
        });
        TlsSmtp {
            port,
            cert,
            received,
            _dir: dir,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn read_line(s: &mut dyn Stream) -> std::io::Result<String> {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    loop {
        if s.read(&mut b)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        line.push(b[0]);
        if b[0] == b'\n' {
            return Ok(String::from_utf8_lossy(&line).into_owned());
        }
    }
}

fn b64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &b| (n << 8) | b as u32) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn session(
    tcp: TcpStream,
    rec: &Mutex<Vec<Received>>,
    acceptor: Option<&native_tls::TlsAcceptor>,
) -> std::io::Result<()> {
    let mut s: Box<dyn Stream> = Box::new(tcp);
    let mut tls = false;
    let mut rcpt = String::new();
    let plain = format!(
        "AUTH PLAIN {}",
        b64(format!("\0{USER}\0{PASSWORD}").as_bytes())
    );
    s.write_all(b"220 localhost ESMTP test\r\n")?;
    loop {
        let line = read_line(&mut *s)?;
        let cmd = line.trim_end().to_string();
        let upper = cmd.to_ascii_uppercase();
        if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            let mut r = String::from("250-localhost\r\n");
            if acceptor.is_some() && !tls {
                r.push_str("250-STARTTLS\r\n");
            }
            r.push_str("250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n");
            s.write_all(r.as_bytes())?;
        } else if upper == "STARTTLS" && acceptor.is_some() && !tls {
            s.write_all(b"220 2.0.0 ready to start TLS\r\n")?;
            let stream = acceptor.unwrap().accept(s).map_err(|e| match e {
                native_tls::HandshakeError::Failure(e) => std::io::Error::other(e.to_string()),
                native_tls::HandshakeError::WouldBlock(_) => std::io::Error::other("would block"),
            })?;
            s = Box::new(stream);
            tls = true;
        } else if upper.starts_with("AUTH PLAIN") {
            if cmd == plain {
                s.write_all(b"235 2.7.0 Authentication successful\r\n")?;
            } else {
                s.write_all(b"535 5.7.8 Authentication credentials invalid\r\n")?;
            }
        } else if upper.starts_with("RCPT TO:") {
            rcpt = cmd[8..].trim_matches(|c| c == '<' || c == '>').to_string();
            s.write_all(b"250 2.1.5 ok\r\n")?;
        } else if upper == "DATA" {
            s.write_all(b"354 go ahead\r\n")?;
            // The message itself is not kept: the tests ask who got one, and how.
            while read_line(&mut *s)? != ".\r\n" {}
            rec.lock().unwrap().push(Received {
                rcpt: rcpt.clone(),
                tls,
            });
            s.write_all(b"250 2.0.0 queued\r\n")?;
        } else if upper == "QUIT" {
            s.write_all(b"221 2.0.0 bye\r\n")?;
            return Ok(());
        } else if upper.starts_with("MAIL FROM:") || upper == "RSET" || upper == "NOOP" {
            s.write_all(b"250 2.0.0 ok\r\n")?;
        } else {
            s.write_all(b"502 5.5.2 not implemented\r\n")?;
        }
    }
}
