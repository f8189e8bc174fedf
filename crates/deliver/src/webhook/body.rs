//! What a webhook message holds: a digest's own document (rendered with
//! the digest, `digest::render::webhook`), or a notification's, each with
//! its request's id; several requests to one recipient in one message are
//! a `batch`. `docs/schema/webhook-digest.schema.json` describes all three.

use chrono::NaiveDateTime;
use serde_json::{json, Value};

/// A notification's document.
pub fn notification(request_id: i64, subject: &str, message: &str, at: NaiveDateTime) -> Value {
    json!({
        "type": "notification",
        "request_id": request_id,
        "subject": subject,
        "message": message,
        "requested_at": at.and_utc().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    })
}

/// A digest's stored document with its request's id.
pub fn digest(request_id: i64, doc: &str) -> Value {
    let mut v: Value = serde_json::from_str(doc).unwrap_or_else(|_| json!({ "type": "digest" }));
    if let Some(o) = v.as_object_mut() {
        o.insert("request_id".into(), json!(request_id));
    }
    v
}

/// The body of a message holding `docs`: the one document, or a batch.
pub fn message(mut docs: Vec<Value>) -> String {
    if docs.len() == 1 {
        return docs.remove(0).to_string();
    }
    json!({ "type": "batch", "messages": docs }).to_string()
}

/// The `webhook-id` of the message of `requests` (in order) to `party`:
/// the same on every attempt of the same rows, so a receiver can drop a
/// retry of a message it took.
pub fn message_id(requests: &[i64], party: i64) -> String {
    match requests {
        [one] => format!("msg_{one}_{party}"),
        [first, ..] => format!("msg_{first}_{party}_{}", requests.len()),
        [] => format!("msg_{party}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_document_alone_several_in_a_batch() {
        let at = chrono::DateTime::UNIX_EPOCH.naive_utc();
        let n = notification(1001, "Hi", "Body", at);
        assert_eq!(message(vec![n.clone()]), n.to_string());
        let d = digest(1002, r#"{"type":"digest","subject":"S"}"#);
        assert_eq!(d["request_id"], 1002);
        let b: Value = serde_json::from_str(&message(vec![n, d])).unwrap();
        assert_eq!(b["type"], "batch");
        assert_eq!(b["messages"][1]["subject"], "S");
        assert_eq!(message_id(&[1001], 7), "msg_1001_7");
        assert_eq!(message_id(&[1001, 1005], 7), "msg_1001_7_2");
    }
}
