DROP INDEX nt_messages_body;
ALTER TABLE nt_messages DROP COLUMN full_url;
ALTER TABLE nt_messages DROP COLUMN manage_url;
ALTER TABLE nt_messages DROP COLUMN body_id;
DROP TABLE nt_bodies;
