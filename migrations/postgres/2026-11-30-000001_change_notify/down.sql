DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['collections', 'parties', 'users', 'group_prefs',
                             'api_tokens', 'collection_tickets'] LOOP
        EXECUTE format('DROP TRIGGER %I ON %I', t || '_changed', t);
    END LOOP;
END;
$$;
DROP FUNCTION digestd_notify_changed();
