-- One subscription per digest. Party, collection (NULL: all), kind,
-- frequency, local hour and day say which digest a subscription delivers;
-- a second subscription with the same six sent every digest twice.
-- `subscriptions::subscribe` refuses such a twin (or merges its channels
-- into the first) inside its write transaction; this index is what stops
-- two concurrent writers, and anything that writes the table directly.
--
-- Twins that a database already holds would make the index fail, and they
-- are sending doubled digests today, so they are folded first. Per digest
-- the survivor is the oldest active subscription (the oldest one when all
-- are paused); it takes the union of the channels of the twins that share
-- its paused state, so nobody loses a channel they receive on, and paused
-- twins of an active survivor start nothing. Its own settings (send_empty,
-- include_own, schedule) stay. The other twins are deleted with their runs;
-- digests they already posted keep their requests (subscription_id cleared,
-- as ON DELETE SET NULL would). down.sql cannot bring them back.
CREATE TEMPORARY TABLE subscription_twins AS
SELECT id, paused, channels, FIRST_VALUE(id) OVER twins AS keep
FROM subscriptions
WINDOW twins AS (
    PARTITION BY party_id, COALESCE(collection_id, -1), kind, frequency,
                 COALESCE(hour_of_day, -1), COALESCE(day_of_week, -1)
    ORDER BY paused, id
);

UPDATE subscriptions SET channels = (
    SELECT SUBSTR(
          CASE WHEN MAX(CASE WHEN ',' || t.channels || ',' LIKE '%,email,%' THEN 1 ELSE 0 END) = 1 THEN ',email' ELSE '' END
       || CASE WHEN MAX(CASE WHEN ',' || t.channels || ',' LIKE '%,xmpp,%' THEN 1 ELSE 0 END) = 1 THEN ',xmpp' ELSE '' END
       || CASE WHEN MAX(CASE WHEN ',' || t.channels || ',' LIKE '%,sms,%' THEN 1 ELSE 0 END) = 1 THEN ',sms' ELSE '' END,
       2)
    FROM subscription_twins t
    WHERE t.keep = subscriptions.id AND t.paused = subscriptions.paused
)
WHERE id IN (SELECT keep FROM subscription_twins WHERE id <> keep);

DELETE FROM subscription_runs
WHERE subscription_id IN (SELECT id FROM subscription_twins WHERE id <> keep);
UPDATE nt_requests SET subscription_id = NULL
WHERE subscription_id IN (SELECT id FROM subscription_twins WHERE id <> keep);
DELETE FROM subscriptions
WHERE id IN (SELECT id FROM subscription_twins WHERE id <> keep);
DROP TABLE subscription_twins;

-- NULL never equals NULL in a unique index, so the nullable columns are
-- folded to -1 (outside every id, hour and day). The index leads with
-- party_id, so it also serves the look-ups by party the index it replaces
-- served: one index more would be one more entry for every tick's update
-- of a subscription row on PostgreSQL.
DROP INDEX subscriptions_party;
CREATE UNIQUE INDEX subscriptions_digest ON subscriptions (
    party_id, COALESCE(collection_id, -1), kind, frequency,
    COALESCE(hour_of_day, -1), COALESCE(day_of_week, -1)
);
