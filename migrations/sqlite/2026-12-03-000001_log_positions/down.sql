ALTER TABLE subscription_runs DROP COLUMN log_to;
ALTER TABLE subscription_runs DROP COLUMN log_from;
ALTER TABLE subscriptions DROP COLUMN last_log_cut;
DROP INDEX modifications_collection_pos;
DROP INDEX modifications_collection_time;
CREATE INDEX modifications_collection_time ON modifications (collection_id, occurred_at);
ALTER TABLE modifications DROP COLUMN log_pos;
DROP TABLE log_clock;
