-- A pass looks, every few milliseconds, for requests cancelled among those
-- whose rows it has handed to the builder (by id range). Cancelled requests
-- are few; this index makes that look-up read only them.
CREATE INDEX nt_requests_cancelled ON nt_requests (request_id) WHERE status = 'cancelled';
