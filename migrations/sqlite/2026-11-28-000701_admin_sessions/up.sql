-- The operator's page sessions (`/admin`): an admin token exchanged at
-- /admin/login for a session id carried in a cookie. Only the id's SHA-256
-- is kept; deleting the token (token revoke) ends its sessions.
CREATE TABLE admin_sessions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    token_id      BIGINT NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
    session_hash  TEXT NOT NULL UNIQUE,
    created_at    TIMESTAMP NOT NULL,
    expires_at    TIMESTAMP NOT NULL
);
CREATE INDEX admin_sessions_token ON admin_sessions (token_id);
CREATE INDEX admin_sessions_expires ON admin_sessions (expires_at);
