-- A pass expands pending requests a round at a time in order of sender and
-- recipient, so that every request of one (sender, recipient) pair is
-- expanded, claimed and sent in the same round: one message per pair. This
-- index gives that order without sorting the whole backlog every round.
CREATE INDEX nt_requests_pending ON nt_requests (party_from, party_to, request_id)
    WHERE status = 'pending';
-- A round loads the rows it claimed by its token. Without an index that was
-- a scan of every queue row ever written (delivered rows stay); settling a
-- row clears its claim, so this index holds only the live claims.
CREATE INDEX nt_queue_claimed ON nt_queue (claimed_by) WHERE claimed_by IS NOT NULL;
