-- The webhook channel: a contact point on it is an https URL, and its
-- secret (Standard Webhooks, `whsec_` and base64) signs every message
-- posted to it; NULL on every other channel. A digest's webhook body is
-- its own JSON document, kept beside its SMS text (NULL when no channel
-- of the request reads it).
--
-- The webhook's presets (slack, discord, teams, ntfy) are contact points
-- whose address is the service's webhook or topic URL, posted by the same
-- listener in the service's format from the same document. 'matrix' is
-- allowed already though no release sends it yet: the Matrix channel is
-- planned next, and naming it now spares a second rebuild of these
-- tables (on SQLite a CHECK changes only by rebuilding the table).
ALTER TABLE contact_points DROP CONSTRAINT contact_points_channel_check;
ALTER TABLE contact_points ADD CONSTRAINT contact_points_channel_check
    CHECK (channel IN ('email', 'xmpp', 'sms', 'webhook', 'slack', 'discord', 'teams', 'ntfy', 'matrix'));
ALTER TABLE contact_points ADD COLUMN secret TEXT;
ALTER TABLE nt_queue DROP CONSTRAINT nt_queue_channel_check;
ALTER TABLE nt_queue ADD CONSTRAINT nt_queue_channel_check
    CHECK (channel IN ('email', 'xmpp', 'sms', 'webhook', 'slack', 'discord', 'teams', 'ntfy', 'matrix'));
ALTER TABLE nt_messages ADD COLUMN message_webhook TEXT;
-- Compressed with lz4 like the other bodies (migration lz4_bodies).
DO $$
BEGIN
    EXECUTE 'ALTER TABLE nt_messages ALTER COLUMN message_webhook SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'lz4 compression is not available here: webhook bodies stay with pglz (%)', SQLERRM;
END $$;
