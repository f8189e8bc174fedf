//! Where the listener records the direct rooms it opens, so that a room
//! opened by a process that died before the queue kept it is found again
//! instead of a second one being opened.
//!
//! Two records, written in this order as soon as a room is created,
//! before the person is invited and anything is sent:
//! - **The person's own** account data entry of the service account,
//!   `org.digestd.direct.{user ID}` = `{"rooms": [...]}`: the one the
//!   listener looks in. One entry per person, so two processes opening
//!   rooms for different people at the same instant never write the same
//!   entry and none is lost (Matrix account data has no compare-and-set:
//!   a write replaces the whole entry).
//! - **`m.direct`**, the spec's record of direct chats, which the service
//!   account's own clients read to show the rooms as direct ones. It is
//!   one entry for everybody, read, changed and written back whole, so
//!   two processes writing it at once can drop each other's room from
//!   it: that costs the display only, never the lookup. It is written
//!   best effort: a failure is logged, not retried.
//!
//! An entry is read whole or not at all: an answer that is not a JSON
//! object (one cut at the read limit, say) is never written back, so
//! nothing recorded is lost; the listener then neither finds nor records
//! (the queue still keeps the room it opens).

use serde_json::{Map, Value};

use super::client::Homeserver;
use super::error::Error;

/// The spec's account data type for direct chats.
const DIRECT: &str = "m.direct";

/// The key of the rooms' list in a person's own record.
const ROOMS: &str = "rooms";

/// The account data type of `user`'s own record.
fn own_kind(user: &str) -> String {
    format!("org.digestd.direct.{user}")
}

/// `me`'s account data `kind`: `Some` map (empty when there is none yet),
/// `None` when it cannot be read whole.
fn read(
    server: &Homeserver,
    token: &str,
    me: &str,
    kind: &str,
) -> Result<Option<Map<String, Value>>, Error> {
    Ok(match server.account_data(token, me, kind)? {
        None => Some(Map::new()),
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            tracing::warn!(
                user = me,
                kind,
                "matrix: account data is not a whole JSON object (larger than 8 MiB?): \
                 direct rooms are neither looked up nor recorded there"
            );
            None
        }
    })
}

/// The rooms `direct` lists under `user` (a person in `m.direct`,
/// [`ROOMS`] in an own record), newest (last recorded) first.
pub(crate) fn rooms_of(direct: &Map<String, Value>, user: &str) -> Vec<String> {
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

/// `direct` with `room` added to the rooms under `user`; `None` when it
/// is there already. An entry that is not a list is replaced.
pub(crate) fn with_room(
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

/// Records `room` as a direct room with `user`: in `user`'s own record
/// (read, changed, written), then in `m.direct` (best effort). Whether it
/// is recorded: false when the own record cannot be read whole.
pub fn record(
    server: &Homeserver,
    token: &str,
    me: &str,
    user: &str,
    room: &str,
) -> Result<bool, Error> {
    let kind = own_kind(user);
    let Some(own) = read(server, token, me, &kind)? else {
        return Ok(false);
    };
    if let Some(changed) = with_room(own, ROOMS, room) {
        server.put_account_data(token, me, &kind, &Value::Object(changed))?;
    }
    let shown = read(server, token, me, DIRECT).and_then(|direct| match direct {
        Some(d) => match with_room(d, user, room) {
            Some(changed) => server.put_account_data(token, me, DIRECT, &Value::Object(changed)),
            None => Ok(()),
        },
        None => Ok(()),
    });
    if let Err(e) = shown {
        tracing::warn!(
            user,
            room,
            "matrix: room not added to m.direct (clients may not show it as direct): {}",
            crate::validate::escape_for_line(&e.to_string())
        );
    }
    Ok(true)
}

/// The newest room `user`'s own record lists that `me` is still
/// joined to and `user` has not left nor been banned from, with `user`'s
/// membership (`join`, `invite`, or `None`: recorded, not invited yet).
pub fn find(
    server: &Homeserver,
    token: &str,
    me: &str,
    user: &str,
) -> Result<Option<(String, Option<String>)>, Error> {
    let Some(own) = read(server, token, me, &own_kind(user))? else {
        return Ok(None);
    };
    for room in rooms_of(&own, ROOMS) {
        // A room the account cannot see any more is no candidate.
        let seen = |who: &str| match server.membership(token, &room, who) {
            Err(e) if e.disables() => Ok(Some("unseen".to_string())),
            other => other,
        };
        if seen(me)?.as_deref() != Some("join") {
            continue;
        }
        let theirs = seen(user)?;
        if still_theirs(theirs.as_deref()) {
            return Ok(Some((room, theirs)));
        }
    }
    Ok(None)
}

/// Whether a room where the person's membership is `m` can take messages
/// to them: joined, invited, or not invited yet (`None`); not one they
/// left, rejected or were banned from.
pub(crate) fn still_theirs(m: Option<&str>) -> bool {
    matches!(m, None | Some("join" | "invite"))
}

/// Invites `user` to `room` ([`Homeserver::invite`]). A refusal after
/// which they are invited or joined all the same (another process of the
/// account invited them first, and the homeserver refuses a second
/// invitation) is no error.
pub(crate) fn invite(
    server: &Homeserver,
    token: &str,
    room: &str,
    user: &str,
) -> Result<(), Error> {
    match server.invite(token, room, user) {
        Err(e) if e.status() == Some(403) => match server.membership(token, room, user) {
            Ok(Some(m)) if still_theirs(Some(&m)) => Ok(()),
            _ => Err(e),
        },
        other => other,
    }
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
