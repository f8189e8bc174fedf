ALTER TABLE nt_messages DROP COLUMN message_webhook;
DELETE FROM nt_queue WHERE channel = 'webhook';
ALTER TABLE nt_queue DROP CONSTRAINT nt_queue_channel_check;
ALTER TABLE nt_queue ADD CONSTRAINT nt_queue_channel_check
    CHECK (channel IN ('email', 'xmpp', 'sms'));
DELETE FROM contact_points WHERE channel = 'webhook';
ALTER TABLE contact_points DROP COLUMN secret;
ALTER TABLE contact_points DROP CONSTRAINT contact_points_channel_check;
ALTER TABLE contact_points ADD CONSTRAINT contact_points_channel_check
    CHECK (channel IN ('email', 'xmpp', 'sms'));
