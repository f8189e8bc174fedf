-- Windows of modification digests follow the log's positions, not only
-- `occurred_at`: a change recorded after its hour's tick is in the next
-- digest (docs/digests.md). `log_clock.next` is the position the next
-- recording transaction takes; SQLite's one writer makes them commit in
-- order; a cut is the next position. Rows recorded before positions
-- existed stand at 0, below every subscription's window, which starts at
-- the cut of the migration: nothing already delivered is sent again.
CREATE TABLE log_clock (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    next BIGINT NOT NULL
);
INSERT INTO log_clock (id, next) VALUES (1, 1);

ALTER TABLE modifications ADD COLUMN log_pos BIGINT NOT NULL DEFAULT 0;
DROP INDEX modifications_collection_time;
CREATE INDEX modifications_collection_time ON modifications (collection_id, occurred_at, log_pos);
CREATE INDEX modifications_collection_pos ON modifications (collection_id, log_pos);

-- Where each subscription's next window starts: the cut of the log its last
-- one ended at (empty: the log's beginning).
ALTER TABLE subscriptions ADD COLUMN last_log_cut TEXT NOT NULL DEFAULT '';
UPDATE subscriptions SET last_log_cut = '1';

ALTER TABLE subscription_runs ADD COLUMN log_from TEXT;
ALTER TABLE subscription_runs ADD COLUMN log_to TEXT;
