-- Seen marks: when a person last viewed an item in the system that feeds
-- digestd (engine `seen`). A modification digest to them leaves out an
-- item whose changes in its window all happened at or before the mark.
-- item_uuid is the item's UUID as the log names it (an item need not be
-- stored in `items`). A later mark replaces an earlier one; an earlier one
-- never moves it back. Purged with the log (`digestd purge`).
CREATE TABLE seen (
    party_id  BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    item_uuid TEXT NOT NULL,
    seen_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (party_id, item_uuid)
);
-- The purge by age.
CREATE INDEX seen_time ON seen (seen_at);
