DROP INDEX nt_requests_unfinished;
CREATE INDEX nt_requests_status ON nt_requests (status);
