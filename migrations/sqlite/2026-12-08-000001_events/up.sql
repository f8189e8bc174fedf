-- The operators' event outbox: what happened (a digest delivered, a
-- delivery given up, a contact point bounced or disabled, a subscription
-- created, paused, resumed or ended, an unsubscribe, a sign-up
-- confirmed), written in the transaction of the change it reports, then
-- posted to [events] url by the queue passes, in id order per order_key
-- ('s:<subscription>', 'p:<party>', or '' for no order). data is the
-- event's JSON document. status: pending until posted (sent), given up
-- after [events] give_up_hours (failed), or of a type [events] types does
-- not name when a pass with an url met it (skipped). No foreign keys:
-- an event is history, and names what it reports by id and by name.
CREATE TABLE events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    type            TEXT NOT NULL,
    order_key       TEXT NOT NULL,
    subscription_id BIGINT,
    party_id        BIGINT,
    occurred_at     TIMESTAMP NOT NULL,
    data            TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    sent_at         TIMESTAMP,
    last_error      TEXT
);
-- The passes read the pending events in id order without the rest.
CREATE INDEX events_pending ON events (id) WHERE status = 'pending';
-- `events list --since`, `events replay --since` and the purge.
CREATE INDEX events_time ON events (occurred_at);
