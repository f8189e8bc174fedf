-- Quiet hours: a person's (users) and a group's (group_prefs) local window,
-- 'HH:MM-HH:MM' (may cross midnight), or '' for none. Owned by parties.
-- Notifications to a recipient inside it wait in the queue until it ends,
-- unless the request is urgent; hourly digests inside it are merged into
-- the first one after it.
ALTER TABLE users ADD COLUMN quiet_hours TEXT NOT NULL DEFAULT '';
ALTER TABLE group_prefs ADD COLUMN quiet_hours TEXT NOT NULL DEFAULT '';
-- A notification that goes at once, quiet hours or not.
ALTER TABLE nt_requests ADD COLUMN urgent BOOLEAN NOT NULL DEFAULT 0;
