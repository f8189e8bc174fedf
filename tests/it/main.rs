//! The integration tests, one binary: each module was a test binary of its
//! own; `common` is the support they share (a throwaway database per test
//! on each back end, the servers the tests talk to).

#[macro_use]
mod common;

mod bench_burst;
mod bench_channels;
mod bench_ndjson;
mod bench_soak;
mod browser;
mod cli_content;
mod cli_delete;
mod cli_general;
mod cli_group_optouts;
mod cli_groups;
mod cli_import;
mod cli_parties;
mod cli_preview;
mod cli_queue;
mod cli_schedule;
mod contrib;
mod crash_window;
mod delivery_concurrency;
mod delivery_queue;
mod delivery_transports;
mod digest_channels;
mod digest_compose;
mod digest_posting;
mod dkim;
mod email_threads;
mod events;
mod harness;
mod hostile_remotes;
mod house_sizes;
mod http_admin;
/// What the `http_api_*` modules share.
mod http_api {
    pub mod support;
}
mod http_api_contacts;
mod http_api_content;
mod http_api_optouts;
mod http_api_people;
mod http_api_requests;
mod http_atom;
mod http_atom_cache;
mod http_atom_pages;
mod http_busy;
mod http_feed_cache;
mod http_feed_single_flight;
mod http_input;
mod http_limits;
mod http_metrics;
mod http_ndjson_stream;
mod http_pages;
mod http_pages_digest;
mod http_pages_group_optout;
mod http_pages_hour;
mod http_pages_matrix;
mod http_pages_signup;
mod http_pages_signup_limits;
mod http_pages_unsubscribe;
mod http_server;
mod import;
mod large_windows;
mod late_changes;
mod layers;
mod lease;
mod logs;
mod matrix;
mod quiet_hours;
mod quiet_hours_web;
mod readme;
mod report;
mod schedule;
mod schedule_groups;
mod schedule_shared;
mod schemas;
mod serve;
mod serve_shared;
mod sms;
mod smtp_tls;
mod startup;
mod status_words;
mod storage_checkpoint;
mod storage_modlog;
mod storage_parties_items;
mod storage_watch;
mod subscriptions;
mod webhook;
mod webhook_presets;
mod xmpp;
mod year;
