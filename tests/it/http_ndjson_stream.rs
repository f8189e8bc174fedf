//! `POST /api/v1/modifications` as NDJSON, read and checked line by line as
//! the body arrives (`crates/http/src/http/stream.rs`), over real sockets on both back
//! ends: a large batch; bad lines numbered as `digestd record` numbers them;
//! lines and characters split across the frames a slow client sends;
//! a key twice; a chunked body past the limit; and the Idempotency-Key of a
//! streamed body, which is the same key as the whole body's.

use crate::common;
use crate::http_api::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::web::{each_backend, Web};
use common::TestDb;
use serde_json::{json, Value};
use support::*;

/// What came back from [`send`].
struct Raw {
    status: u16,
    head: String,
    body: String,
}

impl Raw {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }
}

/// Sends `pieces` as one NDJSON body over a plain socket, each piece
/// written and flushed alone with a pause after it, so the server reads
/// them as separate frames. `chunked`: as chunks of transfer encoding, no
/// length declared. `key`: an Idempotency-Key.
fn send(w: &Web, token: &str, pieces: &[&[u8]], chunked: bool, key: Option<&str>) -> Raw {
    let addr = w.base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    let len: usize = pieces.iter().map(|p| p.len()).sum();
    let framing = match chunked {
        true => "Transfer-Encoding: chunked".to_string(),
        false => format!("Content-Length: {len}"),
    };
    let key = key.map_or(String::new(), |k| format!("Idempotency-Key: {k}\r\n"));
    write!(
        s,
        "POST /api/v1/modifications HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/x-ndjson\r\n{key}{framing}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    for p in pieces {
        // A server that answered early (413) may have closed its side.
        let sent = match chunked {
            true => write!(s, "{:x}\r\n", p.len())
                .and_then(|()| s.write_all(p))
                .and_then(|()| s.write_all(b"\r\n")),
            false => s.write_all(p),
        };
        if sent.and_then(|()| s.flush()).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if chunked {
        let _ = s.write_all(b"0\r\n\r\n");
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("an answer");
    Raw {
        status: head[9..12].parse().unwrap(),
        head: head.to_string(),
        body: body.to_string(),
    }
}

#[test]
fn a_large_ndjson_batch_is_recorded_whole() {
    each_backend(at(), |w| {
        let wd = world(w);
        let one = format!("{}\n", line(&wd.coll, "Standup"));
        let body = one.repeat(20_000);
        // Pieces of 64 KiB: lines end anywhere in them.
        let pieces: Vec<&[u8]> = body.as_bytes().chunks(64 * 1024).collect();
        let a = send(w, &wd.ingest, &pieces, false, None);
        assert_eq!(a.status, 201, "{}", a.body);
        assert_eq!(a.json(), json!({"recorded": 20_000}));
        assert_eq!(rows(w)["modifications"], 20_000);
    });
}

#[test]
fn bad_lines_are_numbered_from_one_counting_blank_ones_and_listed_up_to_100() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let good = line(&wd.coll, "A").to_string();
        let ghost = line(NO_SUCH, "B").to_string();
        // Line 1 good, line 2 blank, line 3 not JSON, line 4 an unknown
        // collection, then 150 lines of bad JSON (5..=154), then a good one.
        let mut body = format!("{good}\n\n{{\"collection\":\n{ghost}\n");
        body.push_str(&"[1]\n".repeat(150));
        body.push_str(&good);
        let pieces: Vec<&[u8]> = body.as_bytes().chunks(7).collect();
        let a = send(w, &wd.ingest, &pieces[..], false, None);
        assert_eq!(a.status, 400, "{}", a.body);
        let j = a.json();
        assert!(
            j["error"]
                .as_str()
                .unwrap()
                .starts_with("152 of 154 lines are invalid, nothing was written; line 3: bad JSON"),
            "{j}"
        );
        let numbers: Vec<u64> = j["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["line"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = (3..=102).collect();
        assert_eq!(numbers, want);
        assert!(j["lines"][1]["error"]
            .as_str()
            .unwrap()
            .contains("no collection"));
        assert_eq!(j["lines_not_listed"], 52);
        assert_eq!(rows(w), before, "nothing written");
    });
}

#[test]
fn lines_and_characters_split_across_frames_are_read_whole() {
    each_backend(at(), |w| {
        let wd = world(w);
        // A title with a two-byte and a four-byte character, lines ended by
        // CRLF, and the first line opened by a byte order mark.
        let a = line(&wd.coll, "Caf\u{e9} \u{1F600}").to_string();
        let b = line(&wd.coll, "Second").to_string();
        let body = format!("\u{FEFF}{a}\r\n{b}\r\n");
        let bytes = body.as_bytes();
        let e9 = body.find('\u{e9}').unwrap();
        let emoji = body.find('\u{1F600}').unwrap();
        let crlf = body.find("\r\n").unwrap();
        // Cut inside the BOM, inside each character, between \r and \n, and
        // in the middle of the second line.
        let cuts = [1, e9 + 1, emoji + 2, crlf + 1, crlf + 20, bytes.len()];
        let mut pieces = Vec::new();
        let mut from = 0;
        for c in cuts {
            pieces.push(&bytes[from..c]);
            from = c;
        }
        let r = send(w, &wd.ingest, &pieces, false, None);
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.json(), json!({"recorded": 2}));
        let titles = modification_titles(w);
        assert_eq!(titles, ["Caf\u{e9} \u{1F600}", "Second"]);
    });
}

/// The titles of the stored modifications, in id order.
fn modification_titles(w: &Web) -> Vec<String> {
    use diesel::prelude::*;
    use digestd::db::schema::modifications as m;
    m::table
        .order(m::id)
        .select(m::item_title)
        .load(&mut w.db.conn())
        .unwrap()
}

#[test]
fn a_line_not_utf8_is_one_bad_line_even_split_across_frames() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let good = line(&wd.coll, "A").to_string();
        // A lone continuation byte in line 2, and on line 3 a character cut
        // short at the end of its line: each piece ends mid-character.
        let body = [
            good.as_bytes(),
            b"\n{\"title\": \"\x80\"}\n{\"title\": \"\xE2\x82",
            b"\"}\n",
            good.as_bytes(),
        ]
        .concat();
        let pieces: Vec<&[u8]> = body.chunks(5).collect();
        let r = send(w, &wd.ingest, &pieces, false, None);
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(
            r.json()["lines"],
            json!([{"line": 2, "error": "not valid UTF-8"}, {"line": 3, "error": "not valid UTF-8"}])
        );
        assert_eq!(rows(w), before);
    });
}

#[test]
fn a_key_twice_in_a_line_refuses_the_body() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let good = line(&wd.coll, "A").to_string();
        let twice = good.replacen("{", "{\"title\": \"X\", ", 1);
        let body = format!("{good}\n{good}\n{twice}\n{good}\n");
        let pieces: Vec<&[u8]> = body.as_bytes().chunks(100).collect();
        let r = send(w, &wd.ingest, &pieces, false, None);
        assert_eq!(r.status, 400, "{}", r.body);
        let e = r.json()["error"].as_str().unwrap().to_string();
        assert!(
            e.starts_with("request body: line 3: duplicate key \"title\""),
            "{e}"
        );
        assert_eq!(rows(w), before);
    });
}

#[test]
fn a_streamed_body_past_the_limit_is_413_and_writes_nothing() {
    for db in [Some(TestDb::sqlite()), TestDb::postgres()]
        .into_iter()
        .flatten()
    {
        let w = Web::start_with(db, at(), |cfg| cfg.http.max_body_bytes = 4096);
        let wd = world(&w);
        let before = rows(&w);
        let one = format!("{}\n", line(&wd.coll, "Standup"));
        let body = one.repeat(40);
        assert!(body.len() > 4096);
        // No length declared: only the bytes read can tell.
        let pieces: Vec<&[u8]> = body.as_bytes().chunks(1000).collect();
        let r = send(&w, &wd.ingest, &pieces, true, None);
        assert_eq!(r.status, 413, "{}", r.body);
        assert!(r.json()["error"]
            .as_str()
            .unwrap()
            .contains("larger than 4096 bytes"));
        assert_eq!(rows(&w), before);
        // Within the limit, chunked is fine.
        let small = one.repeat(3);
        let r = send(&w, &wd.ingest, &[small.as_bytes()], true, None);
        assert_eq!((r.status, r.json()), (201, json!({"recorded": 3})));
    }
}

#[test]
fn a_streamed_body_is_replayed_by_its_idempotency_key() {
    each_backend(at(), |w| {
        let wd = world(w);
        let a = line(&wd.coll, "A").to_string();
        let body = format!("{a}\n{a}\n{a}\n");
        let bytes = body.as_bytes();
        let first = send(
            w,
            &wd.ingest,
            &bytes.chunks(50).collect::<Vec<_>>(),
            false,
            Some("s-1"),
        );
        assert_eq!((first.status, first.json()), (201, json!({"recorded": 3})));
        let after = rows(w);
        // The same bytes cut elsewhere, then chunked: the same body.
        let again = send(
            w,
            &wd.ingest,
            &bytes.chunks(7).collect::<Vec<_>>(),
            true,
            Some("s-1"),
        );
        assert_eq!((again.status, again.json()), (201, json!({"recorded": 3})));
        assert!(
            again
                .head
                .to_ascii_lowercase()
                .contains("idempotent-replayed: true"),
            "{}",
            again.head
        );
        // And sent whole by an ordinary client: the hash is the whole body's.
        let whole = w.send(|c| {
            common::web::with_token(c.post(w.url("/api/v1/modifications")), Some(&wd.ingest))
                .header("content-type", "application/x-ndjson")
                .header("idempotency-key", "s-1")
                .body(body.clone())
        });
        assert_eq!(whole.header("idempotent-replayed").as_deref(), Some("true"));
        assert_eq!(rows(w), after, "a replay writes nothing");
        let other = body.replace("\"A\"", "\"B\"");
        let r = send(w, &wd.ingest, &[other.as_bytes()], false, Some("s-1"));
        assert_eq!(r.status, 422, "{}", r.body);
        assert_eq!(rows(w), after);
    });
}
