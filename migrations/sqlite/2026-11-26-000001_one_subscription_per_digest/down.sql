-- The twins up.sql folded stay folded.
DROP INDEX subscriptions_digest;
CREATE INDEX subscriptions_party ON subscriptions (party_id);
