ALTER TABLE nt_queue ADD CONSTRAINT nt_queue_request_id_fkey
    FOREIGN KEY (request_id) REFERENCES nt_requests (request_id) ON DELETE CASCADE;
ALTER TABLE nt_queue ADD CONSTRAINT nt_queue_party_to_fkey
    FOREIGN KEY (party_to) REFERENCES parties (id);
