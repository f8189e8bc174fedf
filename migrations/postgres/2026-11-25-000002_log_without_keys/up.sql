-- delivery_log is history: it names requests and parties by id and is only
-- ever appended to. Its two foreign keys cost a look-up in each parent per
-- row written (80 ms of the 108 ms an INSERT of 10,000 rows took on
-- PostgreSQL, EXPLAIN ANALYZE in docs/benchmarks.md) and guarded nothing:
-- digestd deletes no request and no party.
ALTER TABLE delivery_log DROP CONSTRAINT delivery_log_request_id_fkey;
ALTER TABLE delivery_log DROP CONSTRAINT delivery_log_party_to_fkey;
