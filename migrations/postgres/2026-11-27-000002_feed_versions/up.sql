-- The Atom feeds' validators. Every write to a collection's modification
-- log (record, item puts, purge) bumps feed_version and sets
-- feed_changed_at in the same transaction, so a conditional GET is
-- answered from this row alone, without reading the log.
ALTER TABLE collections ADD COLUMN feed_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE collections ADD COLUMN feed_changed_at TIMESTAMP;
