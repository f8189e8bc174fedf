-- A forward digest's email carries its items as an iCalendar part
-- (docs/digests.md, Calendar), stored with its other email parts: in the
-- request's own row, or in the shared rendering it points at.
ALTER TABLE nt_messages ADD COLUMN calendar TEXT;
ALTER TABLE nt_bodies ADD COLUMN calendar TEXT;
