ALTER TABLE nt_bodies DROP COLUMN calendar;
ALTER TABLE nt_messages DROP COLUMN calendar;
