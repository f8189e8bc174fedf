//! The service account's `m.direct` account data: for each person, the
//! direct rooms it has with them (the spec's record of direct chats,
//! which clients show as such). The listener records a room there as soon
//! as it is created, before the person is invited and anything is sent,
//! and looks there before creating one: a room opened by a process that
//! died before the queue kept it is found again instead of a second room
//! being opened.
//!
//! The content is read whole or not at all: an answer that is not a JSON
//! object (one cut at the 8 MiB read limit, say) is never written back,
//! so no other person's entry is lost; the listener then neither finds
//! nor records (the queue still keeps the room it opens).

use serde_json::{Map, Value};

use super::super::listener::DeliveryError;
use super::client::Homeserver;
use super::FORBIDDEN;

/// The account data type.
const DIRECT: &str = "m.direct";

/// `me`'s `m.direct`: `Some` map (empty when there is none yet), `None`
/// when it cannot be read whole.
pub fn read(
    server: &Homeserver,
    token: &str,
    me: &str,
) -> Result<Option<Map<String, Value>>, DeliveryError> {
    Ok(match server.account_data(token, me, DIRECT)? {
        None => Some(Map::new()),
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            tracing::warn!(
                user = me,
                "matrix: m.direct is not a whole JSON object (larger than 8 MiB?): \
                 direct rooms are neither looked up nor recorded there"
            );
            None
        }
    })
}

/// The rooms `direct` lists for `user`, newest (last recorded) first.
pub fn rooms_of(direct: &Map<String, Value>, user: &str) -> Vec<String> {
    let mut rooms: Vec<String> = direct
        .get(user)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    rooms.reverse();
    rooms
}

/// `direct` with `room` added to `user`'s rooms; `None` when it is there
/// already. An entry that is not a list is replaced.
pub fn with_room(
    mut direct: Map<String, Value>,
    user: &str,
    room: &str,
) -> Option<Map<String, Value>> {
    let entry = direct
        .entry(user.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !entry.is_array() {
        *entry = Value::Array(Vec::new());
    }
    let list = entry.as_array_mut().expect("made a list above");
    if list.iter().any(|r| r.as_str() == Some(room)) {
        return None;
    }
    list.push(Value::String(room.to_string()));
    Some(direct)
}

/// Records `room` as a direct room with `user` in `me`'s `m.direct`
/// (read, changed, written). Whether it is recorded: false when
/// `m.direct` cannot be read whole.
pub fn record(
    server: &Homeserver,
    token: &str,
    me: &str,
    user: &str,
    room: &str,
) -> Result<bool, DeliveryError> {
    let Some(direct) = read(server, token, me)? else {
        return Ok(false);
    };
    if let Some(changed) = with_room(direct, user, room) {
        server.put_account_data(token, me, DIRECT, &Value::Object(changed))?;
    }
    Ok(true)
}

/// The newest room `me`'s `m.direct` lists with `user` that `me` is still
/// joined to and `user` has not left nor been banned from, with `user`'s
/// membership (`join`, `invite`, or `None`: recorded, not invited yet).
pub fn find(
    server: &Homeserver,
    token: &str,
    me: &str,
    user: &str,
) -> Result<Option<(String, Option<String>)>, DeliveryError> {
    let Some(direct) = read(server, token, me)? else {
        return Ok(None);
    };
    for room in rooms_of(&direct, user) {
        // A room the account cannot see any more is no candidate.
        let seen = |who: &str| match server.membership(token, &room, who) {
            Err(DeliveryError::Permanent {
                code: Some(FORBIDDEN),
                ..
            }) => Ok(Some("unseen".to_string())),
            other => other,
        };
        if seen(me)?.as_deref() != Some("join") {
            continue;
        }
        let theirs = seen(user)?;
        if matches!(theirs.as_deref(), None | Some("join" | "invite")) {
            return Ok(Some((room, theirs)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_room_is_added_once_and_the_newest_comes_first() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let direct = m(json!({"@bob:x": ["!b:x"], "@ana:x": ["!old:x"]}));
        let added = with_room(direct, "@ana:x", "!new:x").unwrap();
        assert_eq!(added["@bob:x"], json!(["!b:x"]), "others kept");
        assert_eq!(rooms_of(&added, "@ana:x"), ["!new:x", "!old:x"]);
        assert!(with_room(added, "@ana:x", "!old:x").is_none());
        let odd = m(json!({"@ana:x": "!not-a-list:x", "@eve:x": [1, "!e:x"]}));
        assert!(rooms_of(&odd, "@ana:x").is_empty());
        assert_eq!(rooms_of(&odd, "@eve:x"), ["!e:x"]);
        assert!(rooms_of(&odd, "@nobody:x").is_empty());
        let fixed = with_room(odd, "@ana:x", "!a:x").unwrap();
        assert_eq!(fixed["@ana:x"], json!(["!a:x"]));
    }
}
