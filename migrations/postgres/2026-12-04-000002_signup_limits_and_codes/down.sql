DROP TABLE retired_codes;
DROP INDEX signups_created;
DROP INDEX signups_network;
DROP INDEX signups_mailbox;
ALTER TABLE signups DROP COLUMN network;
ALTER TABLE signups DROP COLUMN mailbox;
