-- Secrets this installation makes for itself, by name. 'message_id' keys
-- the MAC in every email's Message-ID (nt.REQUEST.PARTY.N.MAC@host), so a
-- bounce is counted only when it quotes a Message-ID digestd made for that
-- party: nobody who can merely mail the bounce address can disable anyone.
CREATE TABLE site_keys (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
INSERT INTO site_keys (name, value) VALUES ('message_id', lower(hex(randomblob(32))));

-- Which message a bounce was about (REQUEST.PARTY): one message bounces
-- once, however many DSNs or recipient blocks report it. Bounces recorded
-- before this have none (NULLs are distinct: they stay).
ALTER TABLE email_bounces ADD COLUMN message_ref TEXT;
CREATE UNIQUE INDEX email_bounces_once ON email_bounces (contact_point_id, message_ref);
