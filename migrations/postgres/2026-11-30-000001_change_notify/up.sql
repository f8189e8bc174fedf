-- Every write of a table that a process caches values from (a feed's
-- head: the collection, its owner's name, zone and locale; a token's
-- scope; a ticket's collection) notifies `digestd_changed` in the
-- writer's own transaction, so listeners hear of it when it commits,
-- from whichever process wrote (`db::watch`). One notification per
-- statement; PostgreSQL folds repeats within a transaction.
CREATE FUNCTION digestd_notify_changed() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('digestd_changed', '');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['collections', 'parties', 'users', 'group_prefs',
                             'api_tokens', 'collection_tickets'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION digestd_notify_changed()',
                       t || '_changed', t);
    END LOOP;
END;
$$;
