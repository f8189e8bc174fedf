ALTER TABLE seen
    DROP CONSTRAINT seen_pkey,
    ADD CONSTRAINT seen_pkey PRIMARY KEY (party_id, item_uuid);
