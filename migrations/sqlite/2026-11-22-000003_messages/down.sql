ALTER TABLE nt_requests ADD COLUMN message TEXT NOT NULL DEFAULT '';
ALTER TABLE nt_requests ADD COLUMN message_html TEXT;
ALTER TABLE nt_requests ADD COLUMN message_chat TEXT;
ALTER TABLE nt_requests ADD COLUMN message_sms TEXT;
UPDATE nt_requests SET
    message = (SELECT m.message FROM nt_messages m WHERE m.request_id = nt_requests.request_id),
    message_html = (SELECT m.message_html FROM nt_messages m WHERE m.request_id = nt_requests.request_id),
    message_chat = (SELECT m.message_chat FROM nt_messages m WHERE m.request_id = nt_requests.request_id),
    message_sms = (SELECT m.message_sms FROM nt_messages m WHERE m.request_id = nt_requests.request_id);
DROP TABLE nt_messages;
