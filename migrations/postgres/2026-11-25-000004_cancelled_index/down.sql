DROP INDEX nt_requests_cancelled;
