ALTER TABLE collections DROP COLUMN feed_changed_at;
ALTER TABLE collections DROP COLUMN feed_version;
