-- Queue rows are claimed by one delivery round at a time (a token and an
-- expiry), so several processes can deliver at once without sending a row
-- twice; a claim left by a crashed process expires and the row is retried.
ALTER TABLE nt_queue ADD COLUMN claimed_by TEXT;
ALTER TABLE nt_queue ADD COLUMN claimed_until TIMESTAMP;
