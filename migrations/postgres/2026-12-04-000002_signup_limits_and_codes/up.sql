-- What the sign-up limits count: the mailbox (the address with its local
-- part and domain case-folded and a `+tag` dropped) and the client's
-- network (its IPv4 /24 or IPv6 /64), so that `Bomb@`, `bomb+1@` and the
-- next address in the same /24 count together. Older rows count as their
-- lower-cased address and exact client.
ALTER TABLE signups ADD COLUMN mailbox TEXT NOT NULL DEFAULT '';
ALTER TABLE signups ADD COLUMN network TEXT NOT NULL DEFAULT '';
UPDATE signups SET mailbox = lower(email), network = client;
CREATE INDEX signups_mailbox ON signups (mailbox, created_at);
CREATE INDEX signups_network ON signups (network, created_at);
CREATE INDEX signups_created ON signups (created_at);

-- Subscriber codes a person replaced (`user rotate-code`, the API, the
-- manage page's "send me a new link"): only their SHA-256, so the table
-- holds nothing that opens a page. An unsubscribe link of mail sent before
-- the change still stops digests with RFC 8058's one-click POST; the
-- manage page no longer opens with it. Owned by src/parties.
CREATE TABLE retired_codes (
    code_hash   TEXT NOT NULL PRIMARY KEY,
    party_id    BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    retired_at  TIMESTAMP NOT NULL
);
CREATE INDEX retired_codes_party ON retired_codes (party_id);
