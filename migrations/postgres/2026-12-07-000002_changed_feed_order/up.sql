-- The `changed` feed walks a window in (occurred_at, item_uuid) order.
-- With the UUID in the time index that walk is the index's own order, so a
-- page reads its rows and stops; without it, every read of a window whose
-- changes share instants (a bulk import, a batch recorded at one time)
-- sorted the whole window. log_pos stays last: reads by time still check
-- it in the index.
DROP INDEX modifications_collection_time;
CREATE INDEX modifications_collection_time ON modifications (collection_id, occurred_at, item_uuid, log_pos);
