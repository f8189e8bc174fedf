ALTER TABLE nt_messages ADD CONSTRAINT nt_messages_request_id_fkey
    FOREIGN KEY (request_id) REFERENCES nt_requests (request_id) ON DELETE CASCADE;
ALTER TABLE nt_requests ADD CONSTRAINT nt_requests_subscription_id_fkey
    FOREIGN KEY (subscription_id) REFERENCES subscriptions (id) ON DELETE SET NULL;
ALTER TABLE nt_requests ADD CONSTRAINT nt_requests_party_to_fkey
    FOREIGN KEY (party_to) REFERENCES parties (id);
ALTER TABLE nt_requests ADD CONSTRAINT nt_requests_party_from_fkey
    FOREIGN KEY (party_from) REFERENCES parties (id);
ALTER TABLE subscription_runs ADD CONSTRAINT subscription_runs_subscription_id_fkey
    FOREIGN KEY (subscription_id) REFERENCES subscriptions (id) ON DELETE CASCADE;
