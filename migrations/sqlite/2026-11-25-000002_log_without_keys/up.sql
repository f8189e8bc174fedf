-- delivery_log is history: it names requests and parties by id and is only
-- ever appended to. Its two foreign keys cost a look-up in each parent per
-- row written and guarded nothing (digestd deletes no request and no
-- party). SQLite drops a foreign key by rebuilding the table.
CREATE TABLE delivery_log_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id     BIGINT NOT NULL,
    party_to       BIGINT NOT NULL,
    channel        TEXT NOT NULL,
    address        TEXT,
    attempted_at   TIMESTAMP NOT NULL,
    outcome        TEXT NOT NULL CHECK (outcome IN ('sent', 'transient', 'permanent', 'gave_up')),
    reply_code     INTEGER,
    reply_message  TEXT,
    remote_id      TEXT
);
INSERT INTO delivery_log_new SELECT id, request_id, party_to, channel, address, attempted_at,
    outcome, reply_code, reply_message, remote_id FROM delivery_log;
DROP TABLE delivery_log;
ALTER TABLE delivery_log_new RENAME TO delivery_log;
CREATE INDEX delivery_log_request ON delivery_log (request_id);
