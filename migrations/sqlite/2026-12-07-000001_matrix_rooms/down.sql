ALTER TABLE contact_points DROP COLUMN matrix_room;
