DROP INDEX subscriptions_due;
CREATE INDEX subscriptions_due ON subscriptions (next_due_at);
