-- A member's opt-out from one group subscription: the group keeps the
-- subscription and its other members keep getting its digests; the queue
-- writes no row for this member when it expands the group's requests.
-- Keyed on the subscription and the person, not on the membership, so it
-- outlives leaving and rejoining the group (or reaching it through another
-- nested group). Owned by src/subscriptions; gone with the subscription.
CREATE TABLE subscription_optouts (
    subscription_id BIGINT NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    party_id        BIGINT NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
    created_at      TIMESTAMP NOT NULL,
    PRIMARY KEY (subscription_id, party_id)
);

-- A person's opt-outs (their manage page).
CREATE INDEX subscription_optouts_party ON subscription_optouts (party_id);
