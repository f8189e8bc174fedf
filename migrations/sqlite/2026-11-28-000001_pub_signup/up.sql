-- Collections an operator offers on the public sign-up page
-- (`digestd collection set UUID --public`).
ALTER TABLE collections ADD COLUMN public BOOLEAN NOT NULL DEFAULT 0;

-- Sign-ups waiting for their address to be confirmed (double opt-in):
-- what was asked for, the hash of the token mailed to the address, when it
-- expires, and when it was confirmed. The rows also count the verification
-- mail per client and per address (the limits), so they are kept after
-- confirmation or expiry for a week (a new sign-up deletes older ones).
CREATE TABLE signups (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash    TEXT NOT NULL UNIQUE,
    email         TEXT NOT NULL,
    client        TEXT NOT NULL,
    wish          TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL,
    expires_at    TIMESTAMP NOT NULL,
    confirmed_at  TIMESTAMP,
    party_id      BIGINT
);
CREATE INDEX signups_client ON signups (client, created_at);
CREATE INDEX signups_email ON signups (email, created_at);
