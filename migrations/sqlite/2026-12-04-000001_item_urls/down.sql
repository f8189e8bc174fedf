ALTER TABLE modifications DROP COLUMN item_url;
ALTER TABLE items DROP COLUMN url;
