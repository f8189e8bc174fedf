DELETE FROM parties WHERE name = 'digestd' AND kind = 'group';
DROP INDEX nt_requests_digest;
ALTER TABLE nt_requests DROP COLUMN unsubscribe_url;
ALTER TABLE nt_requests DROP COLUMN message_sms;
ALTER TABLE nt_requests DROP COLUMN message_chat;
ALTER TABLE nt_requests DROP COLUMN period;
ALTER TABLE nt_requests DROP COLUMN subscription_id;
ALTER TABLE nt_requests DROP COLUMN kind;
