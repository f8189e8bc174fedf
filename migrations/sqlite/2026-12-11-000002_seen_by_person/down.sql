CREATE TABLE seen_rowid (
    party_id  BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    item_uuid TEXT NOT NULL,
    seen_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (party_id, item_uuid)
);
INSERT INTO seen_rowid (party_id, item_uuid, seen_at)
    SELECT party_id, item_uuid, seen_at FROM seen;
DROP TABLE seen;
ALTER TABLE seen_rowid RENAME TO seen;
CREATE INDEX seen_time ON seen (seen_at);
