-- The webhook channel: a contact point on it is an https URL, and its
-- secret (Standard Webhooks, `whsec_` and base64) signs every message
-- posted to it; NULL on every other channel. A digest's webhook body is
-- its own JSON document, kept beside its SMS text (NULL when no channel
-- of the request reads it).
--
-- The webhook's presets (slack, discord, teams, ntfy) are contact points
-- whose address is the service's webhook or topic URL, posted by the same
-- listener in the service's format from the same document. 'matrix' is
-- allowed already though no release sends it yet: the Matrix channel is
-- planned next, and naming it now spares a second rebuild of these
-- tables (on SQLite a CHECK changes only by rebuilding the table).
--
-- SQLite changes a CHECK constraint by rebuilding the table. Dropping
-- contact_points would delete its email_bounces rows (ON DELETE CASCADE,
-- foreign keys on), so they are kept aside and put back; its
-- AUTOINCREMENT counter is carried over, so no id is ever reused. (With
-- foreign keys off nothing cascades, and the rows kept are already there.)
CREATE TEMP TABLE keep_bounces AS SELECT * FROM email_bounces;
CREATE TEMP TABLE keep_seq AS SELECT seq FROM sqlite_sequence WHERE name = 'contact_points';
CREATE TABLE contact_points_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    party_id      BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    channel       TEXT NOT NULL CHECK (channel IN ('email', 'xmpp', 'sms', 'webhook', 'slack', 'discord', 'teams', 'ntfy', 'matrix')),
    address       TEXT NOT NULL,
    verified      BOOLEAN NOT NULL DEFAULT 0,
    disabled      BOOLEAN NOT NULL DEFAULT 0,
    bounce_count  INTEGER NOT NULL DEFAULT 0,
    created_at    TIMESTAMP NOT NULL,
    secret        TEXT,
    UNIQUE (party_id, channel)
);
INSERT INTO contact_points_new (id, party_id, channel, address, verified, disabled,
    bounce_count, created_at)
    SELECT id, party_id, channel, address, verified, disabled, bounce_count, created_at
    FROM contact_points WHERE channel IN ('email', 'xmpp', 'sms', 'webhook', 'slack', 'discord', 'teams', 'ntfy', 'matrix');
DROP TABLE contact_points;
ALTER TABLE contact_points_new RENAME TO contact_points;
UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT seq FROM keep_seq), 0))
    WHERE name = 'contact_points';
INSERT OR IGNORE INTO email_bounces SELECT * FROM keep_bounces
    WHERE contact_point_id IN (SELECT id FROM contact_points);
DROP TABLE keep_bounces;
DROP TABLE keep_seq;
CREATE TABLE nt_queue_new (
    request_id          BIGINT NOT NULL,
    party_to            BIGINT NOT NULL,
    channel             TEXT NOT NULL CHECK (channel IN ('email', 'xmpp', 'sms', 'webhook', 'slack', 'discord', 'teams', 'ntfy', 'matrix')),
    address             TEXT,
    smtp_reply_code     INTEGER,
    smtp_reply_message  TEXT,
    retry_count         INTEGER NOT NULL DEFAULT 0,
    is_successful       BOOLEAN NOT NULL DEFAULT 0,
    gave_up             BOOLEAN NOT NULL DEFAULT 0,
    next_attempt_at     TIMESTAMP NOT NULL,
    last_attempt_at     TIMESTAMP,
    claimed_by          TEXT,
    claimed_until       TIMESTAMP,
    PRIMARY KEY (request_id, party_to, channel)
);
INSERT INTO nt_queue_new SELECT request_id, party_to, channel, address, smtp_reply_code,
    smtp_reply_message, retry_count, is_successful, gave_up, next_attempt_at, last_attempt_at,
    claimed_by, claimed_until FROM nt_queue WHERE channel IN ('email', 'xmpp', 'sms', 'webhook', 'slack', 'discord', 'teams', 'ntfy', 'matrix');
DROP TABLE nt_queue;
ALTER TABLE nt_queue_new RENAME TO nt_queue;
CREATE INDEX nt_queue_due ON nt_queue (next_attempt_at) WHERE is_successful = 0 AND gave_up = 0;
CREATE INDEX nt_queue_claimed ON nt_queue (claimed_by) WHERE claimed_by IS NOT NULL;
ALTER TABLE nt_messages ADD COLUMN message_webhook TEXT;
