DROP INDEX modifications_collection_time;
CREATE INDEX modifications_collection_time ON modifications (collection_id, occurred_at, log_pos);
