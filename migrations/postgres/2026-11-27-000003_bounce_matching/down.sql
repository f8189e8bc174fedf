DROP INDEX email_bounces_once;
ALTER TABLE email_bounces DROP COLUMN message_ref;
DROP TABLE site_keys;
