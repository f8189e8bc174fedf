-- A group's preferences (issue 21, item 14): the zone its subscriptions
-- are scheduled in, the first day of its weeks, the default hour of its
-- daily and weekly digests, and the locale its digests are written in.
-- Owned by src/parties. Every group has one row: the groups that exist
-- get the behaviour they had (UTC, weeks from Monday, 08:00, 24-hour
-- en-GB), new groups get theirs when created. Readers still fall back to
-- those defaults when a row is missing.
CREATE TABLE group_prefs (
    party_id   BIGINT PRIMARY KEY REFERENCES parties (id) ON DELETE CASCADE,
    timezone   TEXT NOT NULL DEFAULT 'UTC',
    week_start INTEGER NOT NULL DEFAULT 0 CHECK (week_start BETWEEN 0 AND 6),
    daily_hour INTEGER NOT NULL DEFAULT 8 CHECK (daily_hour BETWEEN 0 AND 23),
    locale     TEXT NOT NULL DEFAULT 'en-GB'
);

-- Not the system party (a 'group' row that sends digests and receives
-- none), nor a deleted group's tombstone (`NAME (deleted #ID)`).
INSERT INTO group_prefs (party_id)
SELECT id FROM parties
WHERE kind = 'group' AND name <> 'digestd' AND name NOT LIKE '% (deleted #%)';
