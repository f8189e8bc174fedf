-- Digest bodies (4–5 KB of text and HTML a digest) are compressed with lz4
-- rather than PostgreSQL's default pglz, whose compressing showed in the
-- backend's profile of an hourly burst: `bench burst` at 100,000 users,
-- backend CPU 101 against 112 µs a message, the burst 13.4 against 14.6 s.
-- Values stored before keep their compression until rewritten. A server
-- built without lz4 keeps pglz (a notice, not an error).
DO $$
BEGIN
    EXECUTE 'ALTER TABLE nt_messages
                 ALTER COLUMN message SET COMPRESSION lz4,
                 ALTER COLUMN message_html SET COMPRESSION lz4,
                 ALTER COLUMN message_chat SET COMPRESSION lz4,
                 ALTER COLUMN message_sms SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE nt_bodies
                 ALTER COLUMN message SET COMPRESSION lz4,
                 ALTER COLUMN message_html SET COMPRESSION lz4,
                 ALTER COLUMN message_chat SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'lz4 compression is not available here: digest bodies stay with pglz (%)', SQLERRM;
END $$;
