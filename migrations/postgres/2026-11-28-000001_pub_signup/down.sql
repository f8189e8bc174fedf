DROP TABLE signups;
ALTER TABLE collections DROP COLUMN public;
