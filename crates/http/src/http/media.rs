//! What a JSON route accepts as a body: the media type its `Content-Type`
//! names ([`accepts`], checked by the guard from the headers: 415
//! otherwise), and objects whose keys are unique ([`unique_keys`], checked
//! by the body extractor: 400 otherwise). JSON itself lets a parser keep
//! the first or the last of two equal keys, and serde keeps the last for a
//! map and refuses it for a struct; one rule for every route means one
//! reading of a body whatever the handler parses it into.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use axum::http::{header, HeaderMap, StatusCode};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::error::ApiError;

/// The body a JSON route takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Media {
    /// `application/json`.
    Json,
    /// `application/json`, or NDJSON (`application/x-ndjson`).
    JsonOrNdjson,
}

pub const JSON: &str = "application/json";
pub const NDJSON: &str = "application/x-ndjson";

/// What the request's `Content-Type` names, when `media` takes it: `Ok`
/// with whether it is NDJSON; else 415. A `charset` parameter, if any,
/// must be `utf-8`; no other parameter is taken.
pub fn accepts(headers: &HeaderMap, media: Media) -> Result<bool, ApiError> {
    let refused = || {
        let wanted = match media {
            Media::Json => JSON.to_string(),
            Media::JsonOrNdjson => format!("{JSON} or {NDJSON}"),
        };
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("the body must be sent as Content-Type: {wanted}"),
        )
    };
    let Some(v) = headers.get(header::CONTENT_TYPE) else {
        return Err(refused());
    };
    let v = v.to_str().map_err(|_| refused())?;
    let mut parts = v.split(';');
    let essence = parts.next().unwrap_or("").trim();
    let params_ok = parts.all(|p| {
        let Some((k, v)) = p.split_once('=') else {
            return p.trim().is_empty();
        };
        let v = v.trim().trim_matches('"');
        k.trim().eq_ignore_ascii_case("charset")
            && (v.eq_ignore_ascii_case("utf-8") || v.eq_ignore_ascii_case("utf8"))
    });
    if !params_ok {
        return Err(refused());
    }
    if essence.eq_ignore_ascii_case(JSON) {
        Ok(false)
    } else if media == Media::JsonOrNdjson && essence.eq_ignore_ascii_case(NDJSON) {
        Ok(true)
    } else {
        Err(refused())
    }
}

/// 400 when an object in `body` has a key twice; `ndjson`: each line is
/// a value of its own ([`unique_keys_line`]). What is not JSON is left to
/// the handler, which names the fault in its own words (a line that does
/// not parse is checked up to its fault).
pub(crate) fn unique_keys(body: &[u8], ndjson: bool) -> Result<(), ApiError> {
    match ndjson {
        false => unique(body).map_err(|e| ApiError::bad_request(format!("request body: {e}"))),
        true => body
            .split(|b| *b == b'\n')
            .enumerate()
            .try_for_each(|(i, line)| unique_keys_line(i + 1, line)),
    }
}

/// [`unique_keys`] for line `n` (from 1) of an NDJSON body, read alone.
pub(crate) fn unique_keys_line(n: usize, line: &[u8]) -> Result<(), ApiError> {
    unique(line).map_err(|e| ApiError::bad_request(format!("request body: line {n}: {e}")))
}

/// A data error when an object in `text` has a key twice.
fn unique(text: &[u8]) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    match Unique::deserialize(&mut de) {
        Err(e) if e.is_data() => Err(e),
        _ => Ok(()),
    }
}

/// Any JSON value, refusing an object with a key twice (a data error,
/// where a syntax error is a syntax error).
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unique, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
}

/// A key, borrowed from the body when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Past this many keys an object's keys go into a set.
const LINEAR: usize = 16;

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut few: Vec<Cow<'de, str>> = Vec::new();
        let mut many: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(Key(k)) = map.next_key::<Key>()? {
            let seen = match few.len() < LINEAR {
                true => few.contains(&k),
                false => {
                    if many.is_empty() {
                        many.extend(few.iter().cloned());
                    }
                    !many.insert(k.clone())
                }
            };
            if seen {
                return Err(de::Error::custom(format_args!(
                    "duplicate key {}",
                    serde_json::Value::from(k.as_ref())
                )));
            }
            if few.len() < LINEAR {
                few.push(k);
            }
            map.next_value::<Unique>()?;
        }
        Ok(Unique)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(ct: &[u8]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            axum::http::HeaderValue::from_bytes(ct).unwrap(),
        );
        h
    }

    #[test]
    fn json_routes_take_json_and_the_bulk_route_ndjson() {
        use Media::*;
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=\"UTF-8\"",
            "application/json;",
        ] {
            assert_eq!(
                accepts(&headers(ok.as_bytes()), Json).ok(),
                Some(false),
                "{ok}"
            );
        }
        assert_eq!(
            accepts(&headers(b"application/x-ndjson"), JsonOrNdjson).ok(),
            Some(true)
        );
        for bad in [
            &b"application/x-www-form-urlencoded"[..],
            b"text/plain",
            b"application/x-ndjson",
            b"application/json; charset=latin1",
            b"application/json; boundary=x",
            b"application/jsonx",
            b"multipart/form-data; boundary=a",
            b"application/json\xff",
            b"",
        ] {
            let e = accepts(&headers(bad), Json).unwrap_err();
            assert_eq!(e.status, 415, "{bad:?}");
        }
        assert_eq!(
            accepts(&HeaderMap::new(), JsonOrNdjson).unwrap_err().status,
            415
        );
    }

    #[test]
    fn a_key_twice_is_refused_at_any_depth() {
        for bad in [
            r#"{"a": 1, "a": 2}"#,
            r#"[{"name": "x"}, {"name": "y", "tz": "UTC", "name": "z"}]"#,
            r#"{"x": {"y": [{"k": 1, "\u006b": 2}]}}"#,
        ] {
            let e = unique_keys(bad.as_bytes(), false).unwrap_err();
            assert_eq!(e.status, 400);
            assert!(e.message.contains("duplicate key"), "{}", e.message);
        }
        let wide: String = (0..40)
            .map(|i| format!("\"k{i}\": {i}"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(unique_keys(format!("{{{wide}}}").as_bytes(), false).is_ok());
        assert!(unique_keys(format!("{{{wide}, \"k39\": 0}}").as_bytes(), false).is_err());
        for fine in [
            &br#"{"a": 1, "b": {"a": 2}}"#[..],
            br#"[{"a": 1}, {"a": 2}]"#,
            b"not json at all",
            b"[1, 2,",
            b"\xff\xfe",
            b"",
        ] {
            assert!(unique_keys(fine, false).is_ok(), "{fine:?}");
        }
        let nd = b"{\"a\": 1}\n\xff bad line\n{\"b\": 1, \"b\": 2}\n";
        let e = unique_keys(nd, true).unwrap_err();
        assert!(e.message.contains("line 3"), "{}", e.message);
        assert!(unique_keys(b"{\"a\": 1}\n{\"a\": 2}\n", true).is_ok());
    }
}
