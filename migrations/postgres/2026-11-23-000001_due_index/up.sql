-- The tick reads due subscriptions in chunks ordered by (next_due_at, id).
-- Thousands share one next_due_at (everyone at 08:00 in a zone), so an
-- index on next_due_at alone made PostgreSQL read and sort every remaining
-- due row for each chunk of 5,000: a tick cost grew with the square of the
-- due count. With id in the index a chunk reads only its own rows.
-- (SQLite needs no such change: its index entries end with the rowid,
-- which is id, so its index on next_due_at is already in this order.)
DROP INDEX subscriptions_due;
CREATE INDEX subscriptions_due ON subscriptions (next_due_at, id);
