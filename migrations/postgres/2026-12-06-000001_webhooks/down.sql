ALTER TABLE nt_messages DROP COLUMN message_webhook;
DELETE FROM nt_queue WHERE channel NOT IN ('email', 'xmpp', 'sms');
ALTER TABLE nt_queue DROP CONSTRAINT nt_queue_channel_check;
ALTER TABLE nt_queue ADD CONSTRAINT nt_queue_channel_check
    CHECK (channel IN ('email', 'xmpp', 'sms'));
DELETE FROM contact_points WHERE channel NOT IN ('email', 'xmpp', 'sms');
ALTER TABLE contact_points DROP COLUMN secret;
ALTER TABLE contact_points DROP CONSTRAINT contact_points_channel_check;
ALTER TABLE contact_points ADD CONSTRAINT contact_points_channel_check
    CHECK (channel IN ('email', 'xmpp', 'sms'));
