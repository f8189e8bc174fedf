//! Standard Webhooks signing: `webhook-id`, `webhook-timestamp` (unix
//! seconds) and `webhook-signature: v1,<base64 HMAC-SHA256>` of
//! `{id}.{timestamp}.{body}` under the bytes the endpoint's `whsec_`
//! secret stands for.

use base64::Engine as _;

use crate::error::Result;
use crate::parties::webhook_secret_bytes;

/// The `User-Agent` of every post.
pub const USER_AGENT: &str = concat!("digestd/", env!("CARGO_PKG_VERSION"));

/// The headers a message is posted with, in the order written: the
/// signature's three, `content-type` and `user-agent`.
pub fn headers(
    id: &str,
    timestamp: i64,
    secret: &str,
    body: &[u8],
) -> Result<Vec<(&'static str, String)>> {
    Ok(vec![
        ("webhook-id", id.to_string()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", signature(id, timestamp, secret, body)?),
        ("content-type", "application/json".to_string()),
        ("user-agent", USER_AGENT.to_string()),
    ])
}

/// `v1,` and the base64 of HMAC-SHA256(secret's bytes, `id.timestamp.body`).
pub fn signature(id: &str, timestamp: i64, secret: &str, body: &[u8]) -> Result<String> {
    let key = webhook_secret_bytes(secret)?;
    let mac = crate::text::hmac::Keyed::new(&key).mac(&[
        id.as_bytes(),
        b".",
        timestamp.to_string().as_bytes(),
        b".",
        body,
    ]);
    Ok(format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks reference libraries' tests.
    #[test]
    fn the_reference_example_signs_the_same() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let sig = signature(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            secret,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }
}
