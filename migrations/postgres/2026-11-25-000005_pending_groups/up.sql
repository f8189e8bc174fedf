-- Every round of a pass looks for pending requests over groups (they are
-- expanded whole, before the pairs). Through the status index that read
-- every pending request each time: 3 ms a round with 50,000 pending. This
-- index holds only the pending requests over groups, usually none.
CREATE INDEX nt_requests_pending_groups ON nt_requests (request_id)
    WHERE status = 'pending' AND expand_group;
