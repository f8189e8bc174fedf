-- Windows of modification digests follow the log's positions, not only
-- `occurred_at`: a change recorded after its hour's tick is in the next
-- digest (docs/digests.md). A row's position is the id of the transaction
-- that recorded it; a cut is a reader's snapshot (`pg_current_snapshot()`),
-- and a window holds the rows seen at its end's cut and not at its start's.
-- Rows recorded before positions existed stand at 0, seen at every cut:
-- nothing already delivered is sent again.
ALTER TABLE modifications ADD COLUMN log_pos BIGINT NOT NULL DEFAULT 0;
DROP INDEX modifications_collection_time;
CREATE INDEX modifications_collection_time ON modifications (collection_id, occurred_at, log_pos);
CREATE INDEX modifications_collection_pos ON modifications (collection_id, log_pos);

-- Where each subscription's next window starts: the cut of the log its last
-- one ended at (empty: the log's beginning).
ALTER TABLE subscriptions ADD COLUMN last_log_cut TEXT NOT NULL DEFAULT '';
UPDATE subscriptions SET last_log_cut = pg_current_snapshot()::text;

ALTER TABLE subscription_runs ADD COLUMN log_from TEXT, ADD COLUMN log_to TEXT;
