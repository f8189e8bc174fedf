-- digestd foundation schema (SQLite). Same meaning as migrations/postgres.
-- All timestamps are UTC, stored as diesel's TIMESTAMP text (YYYY-MM-DD HH:MM:SS.ffffff).

CREATE TABLE parties (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT NOT NULL CHECK (kind IN ('user', 'group')),
    name        TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMP NOT NULL
);

CREATE TABLE users (
    party_id        BIGINT PRIMARY KEY REFERENCES parties (id) ON DELETE CASCADE,
    timezone        TEXT NOT NULL,
    week_start      INTEGER NOT NULL DEFAULT 0 CHECK (week_start BETWEEN 0 AND 6),
    daily_hour      INTEGER NOT NULL DEFAULT 8 CHECK (daily_hour BETWEEN 0 AND 23),
    locale          TEXT NOT NULL DEFAULT 'en-US',
    subscriber_code TEXT NOT NULL UNIQUE
);

CREATE TABLE memberships (
    group_id   BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    member_id  BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, member_id),
    CHECK (group_id <> member_id)
);
CREATE INDEX memberships_member ON memberships (member_id);

CREATE TABLE contact_points (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    party_id      BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    channel       TEXT NOT NULL CHECK (channel IN ('email', 'xmpp', 'sms')),
    address       TEXT NOT NULL,
    verified      BOOLEAN NOT NULL DEFAULT 0,
    disabled      BOOLEAN NOT NULL DEFAULT 0,
    bounce_count  INTEGER NOT NULL DEFAULT 0,
    created_at    TIMESTAMP NOT NULL,
    UNIQUE (party_id, channel)
);

CREATE TABLE collections (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    owner_id    BIGINT REFERENCES parties (id) ON DELETE SET NULL,
    created_at  TIMESTAMP NOT NULL
);

CREATE TABLE items (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid         TEXT NOT NULL UNIQUE,
    kind         TEXT NOT NULL,
    title        TEXT NOT NULL,
    start_at     TIMESTAMP,
    reminder_at  TIMESTAMP,
    rrule        TEXT,
    timezone     TEXT,
    deleted      BOOLEAN NOT NULL DEFAULT 0,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
CREATE INDEX items_start ON items (start_at);
CREATE INDEX items_reminder ON items (reminder_at);

CREATE TABLE collection_items (
    collection_id BIGINT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    item_id       BIGINT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    PRIMARY KEY (collection_id, item_id)
);
CREATE INDEX collection_items_item ON collection_items (item_id);

-- The modification log (Cosmo): one row per modification ...
CREATE TABLE modifications (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    tx_id         TEXT NOT NULL,
    occurred_at   TIMESTAMP NOT NULL,
    collection_id BIGINT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    item_uuid     TEXT NOT NULL,
    actor_id      BIGINT REFERENCES parties (id) ON DELETE SET NULL,
    action        TEXT NOT NULL CHECK (action IN ('created', 'added', 'removed', 'deleted', 'edited', 'now')),
    item_kind     TEXT NOT NULL,
    item_title    TEXT NOT NULL
);
CREATE INDEX modifications_collection_time ON modifications (collection_id, occurred_at);
CREATE INDEX modifications_time ON modifications (occurred_at);

-- ... and one row per changed attribute.
CREATE TABLE modification_values (
    modification_id BIGINT NOT NULL REFERENCES modifications (id) ON DELETE CASCADE,
    attribute       TEXT NOT NULL,
    old_value       TEXT,
    new_value       TEXT,
    PRIMARY KEY (modification_id, attribute)
);

CREATE TABLE subscriptions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    party_id       BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    collection_id  BIGINT REFERENCES collections (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('forward', 'modification')),
    frequency      TEXT NOT NULL CHECK (frequency IN ('hourly', 'daily', 'weekly')),
    day_of_week    INTEGER CHECK (day_of_week BETWEEN 0 AND 6),
    hour_of_day    INTEGER CHECK (hour_of_day BETWEEN 0 AND 23),
    channels       TEXT NOT NULL,
    paused         BOOLEAN NOT NULL DEFAULT 0,
    include_own    BOOLEAN NOT NULL DEFAULT 0,
    send_empty     BOOLEAN NOT NULL DEFAULT 0,
    created_at     TIMESTAMP NOT NULL,
    -- Scheduler state (owned by schedule::tick): periods scheduled before
    -- active_since (creation or last resume) are never delivered; next_due_at
    -- is the next scheduled instant not yet run: the index a tick reads.
    active_since       TIMESTAMP NOT NULL,
    next_due_at        TIMESTAMP,
    last_scheduled_at  TIMESTAMP,
    last_period        TEXT,
    last_window_end    TIMESTAMP
);
CREATE INDEX subscriptions_party ON subscriptions (party_id);
CREATE INDEX subscriptions_due ON subscriptions (next_due_at);

CREATE TABLE subscription_runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id  BIGINT NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    period           TEXT NOT NULL,
    scheduled_at     TIMESTAMP NOT NULL,
    window_start     TIMESTAMP NOT NULL,
    window_end       TIMESTAMP NOT NULL,
    ran_at           TIMESTAMP NOT NULL,
    request_id       BIGINT,
    UNIQUE (subscription_id, period)
);

-- ACS 4 nt package (seed 000), plus channel and next attempt.
CREATE TABLE nt_requests (
    request_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    party_to      BIGINT NOT NULL REFERENCES parties (id),
    expand_group  BOOLEAN NOT NULL DEFAULT 0,
    party_from    BIGINT NOT NULL REFERENCES parties (id),
    message       TEXT NOT NULL,
    message_html  TEXT,
    subject       TEXT NOT NULL,
    channels      TEXT NOT NULL DEFAULT 'email',
    request_date  TIMESTAMP NOT NULL,
    fulfill_date  TIMESTAMP,
    status        TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'sent', 'sending', 'partial_failure', 'failed', 'cancelled')),
    max_retries   INTEGER NOT NULL DEFAULT 3 CHECK (max_retries >= 1)
);
CREATE INDEX nt_requests_status ON nt_requests (status);

CREATE TABLE nt_queue (
    request_id          BIGINT NOT NULL REFERENCES nt_requests (request_id) ON DELETE CASCADE,
    party_to            BIGINT NOT NULL REFERENCES parties (id),
    channel             TEXT NOT NULL CHECK (channel IN ('email', 'xmpp', 'sms')),
    address             TEXT,
    smtp_reply_code     INTEGER,
    smtp_reply_message  TEXT,
    retry_count         INTEGER NOT NULL DEFAULT 0,
    is_successful       BOOLEAN NOT NULL DEFAULT 0,
    gave_up             BOOLEAN NOT NULL DEFAULT 0,
    next_attempt_at     TIMESTAMP NOT NULL,
    last_attempt_at     TIMESTAMP,
    PRIMARY KEY (request_id, party_to, channel)
);
CREATE INDEX nt_queue_due ON nt_queue (next_attempt_at) WHERE is_successful = 0 AND gave_up = 0;

-- One row per job (the nt_job idea, generalised to a lease per job name).
CREATE TABLE nt_job (
    job_name          TEXT PRIMARY KEY,
    owner             TEXT,
    lease_expires_at  TIMESTAMP,
    last_run_date     TIMESTAMP,
    run_count         BIGINT NOT NULL DEFAULT 0
);
INSERT INTO nt_job (job_name) VALUES ('tick'), ('queue');

CREATE TABLE email_bounces (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    contact_point_id  BIGINT NOT NULL REFERENCES contact_points (id) ON DELETE CASCADE,
    received_at       TIMESTAMP NOT NULL,
    hard              BOOLEAN NOT NULL,
    status_code       TEXT,
    diagnostic        TEXT
);

CREATE TABLE delivery_log (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id     BIGINT NOT NULL REFERENCES nt_requests (request_id) ON DELETE CASCADE,
    party_to       BIGINT NOT NULL REFERENCES parties (id),
    channel        TEXT NOT NULL,
    address        TEXT,
    attempted_at   TIMESTAMP NOT NULL,
    outcome        TEXT NOT NULL CHECK (outcome IN ('sent', 'transient', 'permanent', 'gave_up')),
    reply_code     INTEGER,
    reply_message  TEXT,
    remote_id      TEXT
);
CREATE INDEX delivery_log_request ON delivery_log (request_id);

-- nt_requests ids start at 1000, as in seed 000.
INSERT INTO sqlite_sequence (name, seq) VALUES ('nt_requests', 999);
