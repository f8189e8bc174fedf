-- A digest's renderings, stored once for every recipient who reads the same
-- content in the same style (issue 24 part 4): the email text and HTML and
-- the XMPP text, with a hole (U+0001 and a letter) where each recipient's
-- own links go. A request that uses one points at it from nt_messages and
-- keeps its links there; the queue fills the holes as it sends
-- (digest::render::fill). Written only by digest::store, in the tick's
-- transaction with the messages that point at it (the same tick's later
-- chunks may point at it too); deleted by the queue's history sweep when no
-- message points at it any more. No foreign key: the rows that point at a
-- body are written by the tick that wrote it, after it committed.
CREATE TABLE nt_bodies (
    body_id       INTEGER PRIMARY KEY AUTOINCREMENT,
    message       TEXT NOT NULL,
    message_html  TEXT,
    message_chat  TEXT
);
ALTER TABLE nt_messages ADD COLUMN body_id BIGINT;
ALTER TABLE nt_messages ADD COLUMN manage_url TEXT;
ALTER TABLE nt_messages ADD COLUMN full_url TEXT;
CREATE INDEX nt_messages_body ON nt_messages (body_id) WHERE body_id IS NOT NULL;
