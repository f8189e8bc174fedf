ALTER TABLE nt_queue DROP COLUMN claimed_until;
ALTER TABLE nt_queue DROP COLUMN claimed_by;
