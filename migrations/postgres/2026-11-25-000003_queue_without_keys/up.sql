-- nt_queue rows are written only by the expansion, from the request and the
-- parties it reads in the same statement, and digestd deletes no request
-- and no party. The two foreign keys checked that again for every row, each
-- check a locked look-up in the parent (~75 ms per 10,000 rows, EXPLAIN
-- ANALYZE in docs/benchmarks.md); bench smtp's median on PostgreSQL went
-- from 0.76 to 0.81 without them. A request deleted by hand leaves rows no
-- claim takes (a claim joins the request); a party deleted by hand leaves
-- rows still delivered to the address they were expanded with.
ALTER TABLE nt_queue DROP CONSTRAINT nt_queue_request_id_fkey;
ALTER TABLE nt_queue DROP CONSTRAINT nt_queue_party_to_fkey;
