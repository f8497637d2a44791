-- OAuth 2.1 authorization server (issue 39, docs/oauth.md).
--
-- oauth_clients holds clients registered by RFC 7591; a client the owner
-- approved is bound to the agent its consent created (agent_id), whose
-- consent rules are what its tokens may do. oauth_tokens holds
-- authorization codes, PKCE requests, access and refresh tokens, each under
-- the SHA-256 of its HMAC signature (never the token; an authorization
-- code and its PKCE request share one), with request_id
-- naming the grant every token of one family shares. oauth_secrets holds
-- the HMAC secret every process signs tokens with.
CREATE TABLE oauth_clients (
    id           TEXT PRIMARY KEY,
    secret_hash  TEXT NOT NULL DEFAULT '',
    name         TEXT NOT NULL DEFAULT '',
    metadata     TEXT NOT NULL,
    remote       TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    user_id      TEXT REFERENCES users(id),
    agent_id     TEXT REFERENCES agents(id),
    last_used_at BIGINT
);

CREATE TABLE oauth_tokens (
    kind           TEXT NOT NULL,
    signature_hash TEXT NOT NULL,
    request_id     TEXT NOT NULL,
    client_id      TEXT NOT NULL REFERENCES oauth_clients(id),
    active         BOOLEAN NOT NULL DEFAULT TRUE,
    expires_at     BIGINT NOT NULL,
    request        TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (kind, signature_hash)
);

CREATE INDEX oauth_tokens_request ON oauth_tokens (request_id, kind);
CREATE INDEX oauth_tokens_client ON oauth_tokens (client_id);

CREATE TABLE oauth_secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
