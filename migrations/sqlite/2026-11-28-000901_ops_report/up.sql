-- The operator's daily report (src/report.rs): one row per local day in
-- [ops] report_tz, written in the same transaction as the report's
-- request, so a day's report is posted once whoever ticks.
CREATE TABLE ops_reports (
    local_date TEXT PRIMARY KEY NOT NULL,
    request_id BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
