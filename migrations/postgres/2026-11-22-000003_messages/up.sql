-- A request's bodies move to their own table, owned by the queue: status
-- changes (pending -> sending -> sent) then rewrite only the small request
-- row. On SQLite an UPDATE rewrites the whole row, bodies included, and that
-- was most of the cost of expanding and settling a pass.
CREATE TABLE nt_messages (
    request_id    BIGINT PRIMARY KEY REFERENCES nt_requests (request_id) ON DELETE CASCADE,
    message       TEXT NOT NULL,
    message_html  TEXT,
    message_chat  TEXT,
    message_sms   TEXT
);
INSERT INTO nt_messages (request_id, message, message_html, message_chat, message_sms)
    SELECT request_id, message, message_html, message_chat, message_sms FROM nt_requests;
ALTER TABLE nt_requests DROP COLUMN message;
ALTER TABLE nt_requests DROP COLUMN message_html;
ALTER TABLE nt_requests DROP COLUMN message_chat;
ALTER TABLE nt_requests DROP COLUMN message_sms;
