CREATE TABLE delivery_log_old (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id     BIGINT NOT NULL REFERENCES nt_requests (request_id) ON DELETE CASCADE,
    party_to       BIGINT NOT NULL REFERENCES parties (id),
    channel        TEXT NOT NULL,
    address        TEXT,
    attempted_at   TIMESTAMP NOT NULL,
    outcome        TEXT NOT NULL CHECK (outcome IN ('sent', 'transient', 'permanent', 'gave_up')),
    reply_code     INTEGER,
    reply_message  TEXT,
    remote_id      TEXT
);
INSERT INTO delivery_log_old SELECT id, request_id, party_to, channel, address, attempted_at,
    outcome, reply_code, reply_message, remote_id FROM delivery_log;
DROP TABLE delivery_log;
ALTER TABLE delivery_log_old RENAME TO delivery_log;
CREATE INDEX delivery_log_request ON delivery_log (request_id);
