-- A queue row held for its recipient's quiet hours (its last settle was a
-- hold, not an attempt): set by the settle of a hold, cleared by any other
-- settle and when the recipient's quiet hours or zone change, which makes
-- it due at once (deliver::queue::held). A row waiting on a retry's
-- backoff is never marked, so a change of quiet hours does not hurry it.
ALTER TABLE nt_queue ADD COLUMN held BOOLEAN NOT NULL DEFAULT FALSE;
-- The held rows of a party, found without reading the queue's history.
CREATE INDEX nt_queue_held ON nt_queue (party_to) WHERE held;
