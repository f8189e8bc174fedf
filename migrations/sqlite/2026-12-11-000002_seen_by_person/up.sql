-- Seen marks stored in their key's order (WITHOUT ROWID): a digest reads
-- a chunk of people's marks by party, and in a rowid table each mark
-- found through the key was a second lookup in the table, in the order
-- the marks arrived (time, not person). Same columns, same meaning.
CREATE TABLE seen_by_person (
    party_id  BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    item_uuid TEXT NOT NULL,
    seen_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (party_id, item_uuid)
) WITHOUT ROWID;
INSERT INTO seen_by_person (party_id, item_uuid, seen_at)
    SELECT party_id, item_uuid, seen_at FROM seen;
DROP TABLE seen;
ALTER TABLE seen_by_person RENAME TO seen;
-- The purge by age.
CREATE INDEX seen_time ON seen (seen_at);
