-- nt_queue rows are written only by the expansion, from the request and the
-- parties it reads in the same statement, and digestd deletes no request
-- and no party: the two foreign keys checked that again for every row (see
-- the PostgreSQL migration of the same name for the cost). A request
-- deleted by hand leaves rows no claim takes; a party deleted by hand leaves
-- rows still delivered to the address they were expanded with. SQLite drops
-- a foreign key by rebuilding the table.
CREATE TABLE nt_queue_new (
    request_id          BIGINT NOT NULL,
    party_to            BIGINT NOT NULL,
    channel             TEXT NOT NULL CHECK (channel IN ('email', 'xmpp', 'sms')),
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
    claimed_by, claimed_until FROM nt_queue;
DROP TABLE nt_queue;
ALTER TABLE nt_queue_new RENAME TO nt_queue;
CREATE INDEX nt_queue_due ON nt_queue (next_attempt_at) WHERE is_successful = 0 AND gave_up = 0;
CREATE INDEX nt_queue_claimed ON nt_queue (claimed_by) WHERE claimed_by IS NOT NULL;
