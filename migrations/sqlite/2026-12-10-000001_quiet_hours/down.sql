ALTER TABLE nt_requests DROP COLUMN urgent;
ALTER TABLE group_prefs DROP COLUMN quiet_hours;
ALTER TABLE users DROP COLUMN quiet_hours;
