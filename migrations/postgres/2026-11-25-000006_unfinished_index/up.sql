-- The index on status misled PostgreSQL: with statistics taken when few
-- requests were `sending`, it set each round's final statuses by walking
-- every `sending` entry of this index (live and not yet vacuumed) and
-- filtering by id, instead of looking the round's ids up by key: 12-17 ms
-- a round of 2,000. What needs the unfinished requests (the status sweep
-- at the end of a pass) reads this smaller index, which a final status
-- leaves (fulfill_date is set exactly when a request becomes final), so a
-- final update no longer writes an entry for it either.
DROP INDEX nt_requests_status;
CREATE INDEX nt_requests_unfinished ON nt_requests (request_id) WHERE fulfill_date IS NULL;
