-- Digests (issue 4): a composed digest is an nt request that remembers the
-- run it came from and carries one body per channel.

ALTER TABLE nt_requests ADD COLUMN kind TEXT NOT NULL DEFAULT 'notification'
    CHECK (kind IN ('notification', 'digest'));
ALTER TABLE nt_requests ADD COLUMN subscription_id BIGINT REFERENCES subscriptions (id) ON DELETE SET NULL;
ALTER TABLE nt_requests ADD COLUMN period TEXT;
-- XMPP body (compact plain text) and SMS body (fitted to the segment limit).
ALTER TABLE nt_requests ADD COLUMN message_chat TEXT;
ALTER TABLE nt_requests ADD COLUMN message_sms TEXT;
-- RFC 8058 one-click unsubscribe target, for List-Unsubscribe.
ALTER TABLE nt_requests ADD COLUMN unsubscribe_url TEXT;

-- The second guard against a doubled digest, after subscription_runs.
CREATE UNIQUE INDEX nt_requests_digest ON nt_requests (subscription_id, period)
    WHERE subscription_id IS NOT NULL;

-- The sender of digests whose changes come from no single actor.
INSERT INTO parties (kind, name, created_at) VALUES ('group', 'digestd', '2026-11-22 00:00:00');
