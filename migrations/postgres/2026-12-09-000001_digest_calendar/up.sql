-- A forward digest's email carries its items as an iCalendar part
-- (docs/digests.md, Calendar), stored with its other email parts: in the
-- request's own row, or in the shared rendering it points at.
ALTER TABLE nt_messages ADD COLUMN calendar TEXT;
ALTER TABLE nt_bodies ADD COLUMN calendar TEXT;
-- Compressed with lz4 like the other bodies (migration lz4_bodies).
DO $$
BEGIN
    EXECUTE 'ALTER TABLE nt_messages ALTER COLUMN calendar SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE nt_bodies ALTER COLUMN calendar SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'lz4 compression is not available here: calendars stay with pglz (%)', SQLERRM;
END $$;
