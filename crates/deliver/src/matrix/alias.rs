//! The one name a person's direct room has across processes: a room
//! alias on the service account's homeserver, the only name the
//! homeserver gives out atomically. `createRoom` with `room_alias_name`
//! creates the room and the alias together, or is refused with 400
//! `M_ROOM_IN_USE` (Synapse: 409, for two creations at the same instant)
//! when the alias names a room already, which `GET
//! …/directory/room/{roomAlias}` then gives. Two processes opening the
//! first room for the same person at the same instant so open one room;
//! a process that dies right after `createRoom` leaves a room the next
//! one finds by the same name.
//!
//! The alias's localpart is `digestd.direct.` and 32 hex digits (128
//! bits) of HMAC-SHA256 over the service account's ID, the person's ID
//! and a generation, under a key derived from the installation's secret
//! (`site_keys`, which every process of one database shares). Anyone may
//! resolve an alias, but nobody without the key can tell whose room it
//! is, nor name the room of a person whose ID they know; the room is
//! `private_chat` (invite only), so resolving it lets nobody in.
//!
//! Generation 0 is the person's first room. A room the name holds that
//! cannot take messages to the person (they left it or were banned from
//! it; the account left it, or was removed) is passed over, as the
//! person's record passes over such rooms, and the next generation's
//! name is taken, atomically too; at most [`GENERATIONS`] of them.

use std::time::Duration;

use super::client::Homeserver;
use super::direct;
use super::error::Error;
use crate::text::hmac::Keyed;

/// What the key for the aliases is derived for, from the installation's
/// secret.
pub const PURPOSE: &str = "digestd matrix direct room alias v1";

/// The localpart's fixed beginning: not taken from any ID.
const PREFIX: &str = "digestd.direct.";

/// Hex digits of the keyed hash kept (128 bits).
const HASH_HEX: usize = 32;

/// The most bytes of an alias, sigil and server name included (the
/// spec's limit on every identifier, which Synapse enforces).
const MAX_ALIAS: usize = 255;

/// Names tried for one person before a room is opened without one.
pub(crate) const GENERATIONS: u32 = 16;

/// The waits between looks at the account's membership of a room another
/// process has just created under the name: the alias exists before the
/// creator has joined. About 1.5 s in all.
const PENDING_WAITS_MS: [u64; 5] = [50, 100, 200, 400, 800];

/// The aliases of one service account's direct rooms.
pub struct Namer {
    key: Keyed,
    me: String,
    server: String,
}

impl Namer {
    /// Names for the service account `me` (whose server holds the
    /// aliases) under `key`; `None` when `me` names no server or the
    /// aliases would be longer than the spec allows.
    pub fn new(key: Keyed, me: &str) -> Option<Namer> {
        let (_, server) = me.split_once(':')?;
        let longest = 1 + PREFIX.len() + HASH_HEX + 1 + server.len();
        (!server.is_empty() && longest <= MAX_ALIAS).then(|| Namer {
            key,
            me: me.to_string(),
            server: server.to_string(),
        })
    }

    /// The localpart of `user`'s direct room of `generation`.
    pub fn localpart(&self, user: &str, generation: u32) -> String {
        // NUL separates the parts: no Matrix ID holds one.
        let g = generation.to_string();
        let mac = self.key.mac(&[
            self.me.as_bytes(),
            b"\0",
            user.as_bytes(),
            b"\0",
            g.as_bytes(),
        ]);
        let mut hash = crate::text::hex(&mac);
        hash.truncate(HASH_HEX);
        format!("{PREFIX}{hash}")
    }

    /// The whole alias, `#{localpart}:{server}`.
    pub fn alias(&self, localpart: &str) -> String {
        format!("#{localpart}:{}", self.server)
    }
}

/// What the walk along a person's names gave.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A room created now under a name: no other process has it.
    Created(String),
    /// The room a name holds, which the account has joined, with the
    /// person's membership there (`None`: not invited yet).
    Found(String, Option<String>),
    /// The homeserver would not create the alias (its policy): the
    /// refusal.
    Refused(Error),
    /// Every name holds a room that cannot take messages to the person.
    Exhausted,
}

/// The room under `user`'s first usable name: created, or found. A room
/// the account has not joined yet (another process is creating it) is
/// looked at again for about 1.5 s, then [`Error::AliasPending`].
pub(crate) fn open(
    server: &Homeserver,
    token: &str,
    names: &Namer,
    user: &str,
) -> Result<Opened, Error> {
    for generation in 0..GENERATIONS {
        let local = names.localpart(user, generation);
        match server.create_room(token, Some(&local)) {
            Ok(room) => return Ok(Opened::Created(room)),
            Err(e) if e.alias_taken() => {}
            Err(e) if e.alias_refused() => return Ok(Opened::Refused(e)),
            Err(e) => return Err(e),
        }
        let alias = names.alias(&local);
        let room = server.resolve_alias(token, &alias)?;
        if !account_in(server, token, &names.me, &alias, &room)? {
            tracing::info!(
                user,
                room = room.as_str(),
                alias = alias.as_str(),
                "matrix: the account is no longer in the room the alias names: \
                 the next name is taken"
            );
            continue;
        }
        let theirs = server.membership(token, &room, user)?;
        if direct::still_theirs(theirs.as_deref()) {
            return Ok(Opened::Found(room, theirs));
        }
        tracing::info!(
            user,
            room = room.as_str(),
            alias = alias.as_str(),
            "matrix: the person left the room the alias names: the next name is taken"
        );
    }
    Ok(Opened::Exhausted)
}

/// Whether the account (`me`) is in `room`: true once joined, false
/// when it left it, was removed or banned, or was only invited (a room
/// someone else made); neither yet (the room is being created) after
/// the waits is [`Error::AliasPending`].
fn account_in(
    server: &Homeserver,
    token: &str,
    me: &str,
    alias: &str,
    room: &str,
) -> Result<bool, Error> {
    for wait in PENDING_WAITS_MS.iter().map(Some).chain([None]) {
        match server.membership(token, room, me) {
            Ok(Some(m)) => return Ok(m == "join"),
            // No member event for the account, or a room it may not read
            // (not in it yet).
            Ok(None) => {}
            Err(e) if matches!(e.status(), Some(403 | 404)) => {}
            Err(e) => return Err(e),
        }
        if let Some(ms) = wait {
            std::thread::sleep(Duration::from_millis(*ms));
        }
    }
    Err(Error::AliasPending {
        alias: alias.to_string(),
        room: room.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namer(secret: &str, me: &str) -> Namer {
        Namer::new(Keyed::new(secret.as_bytes()), me).unwrap()
    }

    #[test]
    fn a_name_is_stable_keyed_and_tells_nothing_of_the_ids() {
        let n = namer("k1", "@notices:example.org");
        let ana = n.localpart("@ana:example.org", 0);
        assert_eq!(ana, n.localpart("@ana:example.org", 0), "stable");
        assert_eq!(
            ana,
            namer("k1", "@notices:example.org").localpart("@ana:example.org", 0),
            "the same in another process"
        );
        let others = [
            namer("k2", "@notices:example.org").localpart("@ana:example.org", 0),
            namer("k1", "@other:example.org").localpart("@ana:example.org", 0),
            n.localpart("@Ana:example.org", 0),
            n.localpart("@ana:example.org", 1),
            n.localpart("@bob:example.org", 0),
            // The parts cannot be shifted into each other.
            namer("k1", "@notices:example.or").localpart("g@ana:example.org", 0),
        ];
        for o in &others {
            assert_ne!(o, &ana);
        }
        assert_eq!(ana.len(), PREFIX.len() + HASH_HEX);
        let hash = ana.strip_prefix(PREFIX).unwrap();
        assert!(hash
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        for part in ["ana", "notices", "example", "org", ":", "@"] {
            assert!(!ana.contains(part), "{part} in {ana}");
        }
        assert_eq!(n.alias(&ana), format!("#{ana}:example.org"));
    }

    #[test]
    fn a_name_is_a_valid_alias_for_any_person() {
        let n = namer("k1", "@digestd:[::1]:8448");
        let people = [
            "@ana:example.org".to_string(),
            "@historical!#$%&'*:example.org".to_string(),
            format!("@{}:example.org", "a".repeat(240)),
        ];
        for p in &people {
            let local = n.localpart(p, 7);
            // The new user-ID grammar, a subset of every alias grammar:
            // no `:`, no white space, nothing a homeserver refuses.
            assert!(crate::validate::is_new_localpart(&local), "{local}");
            let alias = n.alias(&local);
            assert!(alias.len() <= MAX_ALIAS, "{alias}");
            assert!(alias.ends_with(":[::1]:8448"), "{alias}");
        }
    }

    #[test]
    fn an_account_without_room_for_the_alias_gets_no_names() {
        let key = || Keyed::new(b"k");
        assert!(Namer::new(key(), "@digestd").is_none());
        assert!(Namer::new(key(), "@digestd:").is_none());
        let long = format!("@d:{}", "s".repeat(MAX_ALIAS - PREFIX.len() - HASH_HEX - 2));
        assert!(Namer::new(key(), &long).is_some());
        assert!(Namer::new(key(), &format!("{long}s")).is_none());
    }
}
