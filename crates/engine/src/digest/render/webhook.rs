//! A digest as the webhook channel posts it: one JSON document
//! (`docs/schema/webhook-digest.schema.json`) built with serde_json from the
//! digest's structure, not from its text: the subscription, the period,
//! each collection's items with their title, link and what changed, and
//! the recipient's links. The queue adds the request's id as it sends it
//! (`deliver::webhook::body`).

use serde_json::{json, Value};

use super::{fill_code, Body, Frame, CODE_HOLE};

/// The JSON document of `b` for the recipient framed by `f`.
pub fn document(b: &Body, f: &Frame) -> String {
    let sections: Vec<Value> = b
        .sections
        .iter()
        .map(|s| {
            let items: Vec<Value> = s
                .lines
                .iter()
                .map(|l| {
                    json!({
                        "title": l.title(),
                        "link": l.url(),
                        "change": l.text(),
                        "before": l.before(),
                        "after": l.after(),
                    })
                })
                .collect();
            json!({ "collection": s.name, "items": items })
        })
        .collect();
    json!({
        "type": "digest",
        "subscription_id": f.subscription.map(|s| s.0),
        "kind": f.kind.as_str(),
        "frequency": f.frequency.as_str(),
        "subject": b.heading,
        "locale": b.words.lang,
        "period": {
            "start": f.window_start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "end": f.window_end.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        },
        "collection_id": f.collection.map(|c| c.0),
        "sections": sections,
        "more": b.more,
        "manage_url": f.manage_url,
        "unsubscribe_url": f.unsubscribe_url,
        "full_url": f.full_url,
    })
    .to_string()
}

/// `doc` (from [`document`]) for the member whose subscriber code is
/// `code`: the code hole in its links filled. The hole is a control
/// character, which JSON holds escaped, so the document is read, its
/// strings filled, and written again; anything that is not JSON is kept.
pub fn fill_code_json(doc: &str, code: &str) -> String {
    if !doc.contains("\\u0001") {
        return doc.to_string();
    }
    fn walk(v: &mut Value, code: &str) {
        match v {
            Value::String(s) if s.contains(CODE_HOLE) => *s = fill_code(s, code),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, code)),
            Value::Object(o) => o.values_mut().for_each(|x| walk(x, code)),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(doc) {
        Ok(mut v) => {
            walk(&mut v, code);
            v.to_string()
        }
        Err(_) => doc.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_members_code_fills_the_links_and_nothing_else() {
        let doc = json!({
            "type": "digest",
            "manage_url": format!("https://x/s/{CODE_HOLE}"),
            "sections": [{"items": [{"title": "\\u0001c stays"}]}],
        })
        .to_string();
        let v: Value = serde_json::from_str(&fill_code_json(&doc, "abc")).unwrap();
        assert_eq!(v["manage_url"], "https://x/s/abc");
        assert_eq!(v["sections"][0]["items"][0]["title"], "\\u0001c stays");
        assert_eq!(fill_code_json("{\"a\":1}", "abc"), "{\"a\":1}");
    }
}
