//! Table definitions shared by both back ends (kept in step with
//! `migrations/sqlite` and `migrations/postgres`; the column types are the
//! ones both back ends map the same way).

diesel::table! {
    parties (id) {
        id -> BigInt,
        kind -> Text,
        name -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    users (party_id) {
        party_id -> BigInt,
        timezone -> Text,
        week_start -> Integer,
        daily_hour -> Integer,
        locale -> Text,
        subscriber_code -> Text,
        quiet_hours -> Text,
    }
}

diesel::table! {
    /// A group's preferences (a user's are in `users`).
    group_prefs (party_id) {
        party_id -> BigInt,
        timezone -> Text,
        week_start -> Integer,
        daily_hour -> Integer,
        locale -> Text,
        quiet_hours -> Text,
    }
}

diesel::table! {
    memberships (group_id, member_id) {
        group_id -> BigInt,
        member_id -> BigInt,
    }
}

diesel::table! {
    contact_points (id) {
        id -> BigInt,
        party_id -> BigInt,
        channel -> Text,
        address -> Text,
        verified -> Bool,
        disabled -> Bool,
        bounce_count -> Integer,
        created_at -> Timestamp,
        secret -> Nullable<Text>,
        matrix_room -> Nullable<Text>,
    }
}

diesel::table! {
    collections (id) {
        id -> BigInt,
        uuid -> Text,
        name -> Text,
        owner_id -> Nullable<BigInt>,
        created_at -> Timestamp,
        feed_version -> BigInt,
        feed_changed_at -> Nullable<Timestamp>,
        public -> Bool,
    }
}

diesel::table! {
    items (id) {
        id -> BigInt,
        uuid -> Text,
        kind -> Text,
        title -> Text,
        start_at -> Nullable<Timestamp>,
        reminder_at -> Nullable<Timestamp>,
        rrule -> Nullable<Text>,
        timezone -> Nullable<Text>,
        deleted -> Bool,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        url -> Nullable<Text>,
    }
}

diesel::table! {
    collection_items (collection_id, item_id) {
        collection_id -> BigInt,
        item_id -> BigInt,
    }
}

diesel::table! {
    modifications (id) {
        id -> BigInt,
        tx_id -> Text,
        occurred_at -> Timestamp,
        collection_id -> BigInt,
        item_uuid -> Text,
        actor_id -> Nullable<BigInt>,
        action -> Text,
        item_kind -> Text,
        item_title -> Text,
        log_pos -> BigInt,
        item_url -> Nullable<Text>,
    }
}

diesel::table! {
    modification_values (modification_id, attribute) {
        modification_id -> BigInt,
        attribute -> Text,
        old_value -> Nullable<Text>,
        new_value -> Nullable<Text>,
    }
}

diesel::table! {
    subscriptions (id) {
        id -> BigInt,
        party_id -> BigInt,
        collection_id -> Nullable<BigInt>,
        kind -> Text,
        frequency -> Text,
        day_of_week -> Nullable<Integer>,
        hour_of_day -> Nullable<Integer>,
        channels -> Text,
        paused -> Bool,
        include_own -> Bool,
        send_empty -> Bool,
        created_at -> Timestamp,
        active_since -> Timestamp,
        next_due_at -> Nullable<Timestamp>,
        last_scheduled_at -> Nullable<Timestamp>,
        last_period -> Nullable<Text>,
        last_window_end -> Nullable<Timestamp>,
        last_log_cut -> Text,
    }
}

diesel::table! {
    subscription_runs (id) {
        id -> BigInt,
        subscription_id -> BigInt,
        period -> Text,
        scheduled_at -> Timestamp,
        window_start -> Timestamp,
        window_end -> Timestamp,
        ran_at -> Timestamp,
        request_id -> Nullable<BigInt>,
        log_from -> Nullable<Text>,
        log_to -> Nullable<Text>,
    }
}

diesel::table! {
    nt_requests (request_id) {
        request_id -> BigInt,
        party_to -> BigInt,
        expand_group -> Bool,
        party_from -> BigInt,
        subject -> Text,
        channels -> Text,
        request_date -> Timestamp,
        fulfill_date -> Nullable<Timestamp>,
        status -> Text,
        max_retries -> Integer,
        kind -> Text,
        subscription_id -> Nullable<BigInt>,
        period -> Nullable<Text>,
        unsubscribe_url -> Nullable<Text>,
        urgent -> Bool,
    }
}

diesel::table! {
    nt_messages (request_id) {
        request_id -> BigInt,
        message -> Text,
        message_html -> Nullable<Text>,
        message_chat -> Nullable<Text>,
        message_sms -> Nullable<Text>,
        body_id -> Nullable<BigInt>,
        manage_url -> Nullable<Text>,
        full_url -> Nullable<Text>,
        message_webhook -> Nullable<Text>,
        calendar -> Nullable<Text>,
    }
}

diesel::table! {
    nt_bodies (body_id) {
        body_id -> BigInt,
        message -> Text,
        message_html -> Nullable<Text>,
        message_chat -> Nullable<Text>,
        calendar -> Nullable<Text>,
    }
}

diesel::table! {
    nt_queue (request_id, party_to, channel) {
        request_id -> BigInt,
        party_to -> BigInt,
        channel -> Text,
        address -> Nullable<Text>,
        smtp_reply_code -> Nullable<Integer>,
        smtp_reply_message -> Nullable<Text>,
        retry_count -> Integer,
        is_successful -> Bool,
        gave_up -> Bool,
        next_attempt_at -> Timestamp,
        last_attempt_at -> Nullable<Timestamp>,
        claimed_by -> Nullable<Text>,
        claimed_until -> Nullable<Timestamp>,
        held -> Bool,
    }
}

diesel::table! {
    nt_job (job_name) {
        job_name -> Text,
        owner -> Nullable<Text>,
        lease_expires_at -> Nullable<Timestamp>,
        last_run_date -> Nullable<Timestamp>,
        run_count -> BigInt,
    }
}

diesel::table! {
    email_bounces (id) {
        id -> BigInt,
        contact_point_id -> BigInt,
        received_at -> Timestamp,
        hard -> Bool,
        status_code -> Nullable<Text>,
        diagnostic -> Nullable<Text>,
        message_ref -> Nullable<Text>,
    }
}

diesel::table! {
    site_keys (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    delivery_log (id) {
        id -> BigInt,
        request_id -> BigInt,
        party_to -> BigInt,
        channel -> Text,
        address -> Nullable<Text>,
        attempted_at -> Timestamp,
        outcome -> Text,
        reply_code -> Nullable<Integer>,
        reply_message -> Nullable<Text>,
        remote_id -> Nullable<Text>,
    }
}

diesel::joinable!(users -> parties (party_id));
diesel::joinable!(group_prefs -> parties (party_id));
diesel::joinable!(contact_points -> parties (party_id));
diesel::joinable!(collection_items -> collections (collection_id));
diesel::joinable!(collection_items -> items (item_id));
diesel::joinable!(modifications -> collections (collection_id));
diesel::joinable!(modification_values -> modifications (modification_id));
diesel::joinable!(subscriptions -> parties (party_id));
diesel::joinable!(subscription_runs -> subscriptions (subscription_id));
diesel::joinable!(nt_queue -> nt_requests (request_id));
diesel::joinable!(nt_messages -> nt_requests (request_id));
diesel::joinable!(nt_messages -> nt_bodies (body_id));
diesel::joinable!(collection_tickets -> collections (collection_id));
diesel::joinable!(idempotency_keys -> api_tokens (token_id));

diesel::allow_tables_to_appear_in_same_query!(
    parties,
    ops_reports,
    users,
    group_prefs,
    memberships,
    contact_points,
    collections,
    items,
    collection_items,
    modifications,
    modification_values,
    subscriptions,
    subscription_runs,
    nt_requests,
    nt_messages,
    nt_bodies,
    nt_queue,
    nt_job,
    email_bounces,
    delivery_log,
    api_tokens,
    collection_tickets,
    idempotency_keys,
    site_keys,
    subscription_optouts,
);

diesel::table! {
    api_tokens (id) {
        id -> BigInt,
        name -> Text,
        scope -> Text,
        secret_hash -> Text,
        created_at -> Timestamp,
        last_used_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    collection_tickets (id) {
        id -> BigInt,
        collection_id -> BigInt,
        secret_hash -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    idempotency_keys (token_id, route, idem_key) {
        token_id -> BigInt,
        route -> Text,
        idem_key -> Text,
        request_hash -> Text,
        status -> Integer,
        body -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    ops_reports (local_date) {
        local_date -> Text,
        request_id -> BigInt,
        created_at -> Timestamp,
    }
}

diesel::table! {
    signups (id) {
        id -> BigInt,
        token_hash -> Text,
        email -> Text,
        client -> Text,
        wish -> Text,
        created_at -> Timestamp,
        expires_at -> Timestamp,
        confirmed_at -> Nullable<Timestamp>,
        party_id -> Nullable<BigInt>,
        mailbox -> Text,
        network -> Text,
    }
}

diesel::table! {
    retired_codes (code_hash) {
        code_hash -> Text,
        party_id -> BigInt,
        retired_at -> Timestamp,
    }
}

diesel::table! {
    admin_sessions (id) {
        id -> BigInt,
        token_id -> BigInt,
        session_hash -> Text,
        created_at -> Timestamp,
        expires_at -> Timestamp,
    }
}

diesel::joinable!(admin_sessions -> api_tokens (token_id));
diesel::allow_tables_to_appear_in_same_query!(admin_sessions, api_tokens);

diesel::table! {
    /// A member's opt-out from a group's subscription (`subscriptions`).
    subscription_optouts (subscription_id, party_id) {
        subscription_id -> BigInt,
        party_id -> BigInt,
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// The operators' event outbox (engine `events`; posted by the queue
    /// passes, `deliver::events`).
    events (id) {
        id -> BigInt,
        #[sql_name = "type"]
        kind -> Text,
        order_key -> Text,
        subscription_id -> Nullable<BigInt>,
        party_id -> Nullable<BigInt>,
        occurred_at -> Timestamp,
        data -> Text,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        sent_at -> Nullable<Timestamp>,
        last_error -> Nullable<Text>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(events, parties);

diesel::table! {
    /// When a person last viewed an item (engine `seen`); the digest leaves
    /// out what they saw.
    seen (party_id, item_uuid) {
        party_id -> BigInt,
        item_uuid -> Text,
        seen_at -> Timestamp,
    }
}

diesel::allow_tables_to_appear_in_same_query!(seen, parties);
