-- Who may use the HTTP API. A token's secret is shown once, when it is
-- made; only its SHA-256 is kept, so a copy of the database lets nobody in.
CREATE TABLE api_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL UNIQUE,
    scope         TEXT NOT NULL,
    secret_hash   TEXT NOT NULL UNIQUE,
    created_at    TIMESTAMP NOT NULL,
    last_used_at  TIMESTAMP
);

-- Read tickets (Cosmo): a secret that lets its bearer read one
-- collection's feeds, and nothing else. Kept as a hash, like tokens.
CREATE TABLE collection_tickets (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    collection_id  BIGINT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    secret_hash    TEXT NOT NULL UNIQUE,
    created_at     TIMESTAMP NOT NULL
);
CREATE INDEX collection_tickets_collection ON collection_tickets (collection_id);

-- Idempotency-Key: the first answer to a POST, kept for retries with the
-- same key. A key is scoped to the route and the token that sent it.
CREATE TABLE idempotency_keys (
    token_id      BIGINT NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
    route         TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    status        INTEGER NOT NULL,
    body          TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (token_id, route, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
