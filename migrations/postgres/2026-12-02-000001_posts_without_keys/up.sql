-- The rows a tick writes for every digest checked five foreign keys, each
-- check a locked look-up in the parent table: the run's subscription, the
-- request's two parties and its subscription, and the message's request.
-- 20,000 runs went in in 200–286 ms with their key and 77–80 ms without
-- (psql, `session_replication_role = replica`, docs/benchmarks.md).
--
-- None of them guards a path digestd takes. Parties are never deleted
-- (a deleted user's rows go, the party stays). Subscriptions are deleted
-- only by `subscriptions::end_in_tx`, which deletes their runs itself and
-- clears `nt_requests.subscription_id` itself (`queue::withdraw_in_tx`),
-- as the keys' CASCADE and SET NULL did; a collection's subscriptions are
-- ended before it goes. Requests are deleted only by the queue's purge,
-- which deletes their messages, queue rows and log first. SQLite keeps its
-- keys (a check there is a B-tree look-up, and dropping one means
-- rebuilding the table).
ALTER TABLE subscription_runs DROP CONSTRAINT subscription_runs_subscription_id_fkey;
ALTER TABLE nt_requests DROP CONSTRAINT nt_requests_party_from_fkey;
ALTER TABLE nt_requests DROP CONSTRAINT nt_requests_party_to_fkey;
ALTER TABLE nt_requests DROP CONSTRAINT nt_requests_subscription_id_fkey;
ALTER TABLE nt_messages DROP CONSTRAINT nt_messages_request_id_fkey;
