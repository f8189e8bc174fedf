-- The Matrix channel: a contact point on it is a user ID (@local:server)
-- or a room ID (!opaque:server). For a user ID, digestd opens a direct
-- room on the first delivery and keeps its id here, so later deliveries
-- go to the same room; NULL until then, and on every other channel. Set
-- and enable clear it (a new address, or a person back after leaving the
-- room, gets a new room). The channel CHECKs allow 'matrix' already
-- (migration webhooks), so no table is rebuilt.
ALTER TABLE contact_points ADD COLUMN matrix_room TEXT;
