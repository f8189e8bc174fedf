-- The `changed` feed reads a page of items at a time: each item found in
-- the window's time order is checked for an earlier change in the window,
-- and a page's items' modifications are read, by item, not by scanning
-- the whole window.
CREATE INDEX modifications_collection_item_time ON modifications (collection_id, item_uuid, occurred_at);
