DROP TABLE idempotency_keys;
DROP TABLE collection_tickets;
DROP TABLE api_tokens;
