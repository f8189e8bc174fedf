ALTER TABLE delivery_log ADD CONSTRAINT delivery_log_request_id_fkey
    FOREIGN KEY (request_id) REFERENCES nt_requests (request_id) ON DELETE CASCADE;
ALTER TABLE delivery_log ADD CONSTRAINT delivery_log_party_to_fkey
    FOREIGN KEY (party_to) REFERENCES parties (id);
