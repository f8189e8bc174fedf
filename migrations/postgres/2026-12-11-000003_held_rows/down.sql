DROP INDEX nt_queue_held;
ALTER TABLE nt_queue DROP COLUMN held;
