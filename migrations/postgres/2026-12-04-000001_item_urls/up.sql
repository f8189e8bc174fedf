-- Where an item lives in its source system (http or https), so that feeds
-- and digests link an item to a page that exists. Kept on the item (what
-- `item put` sends) and on each modification (what `record` sends, and
-- what an item carried when it changed); NULL: no link.
ALTER TABLE items ADD COLUMN url TEXT;
ALTER TABLE modifications ADD COLUMN item_url TEXT;
