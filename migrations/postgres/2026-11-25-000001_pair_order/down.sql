DROP INDEX nt_queue_claimed;
DROP INDEX nt_requests_pending;
