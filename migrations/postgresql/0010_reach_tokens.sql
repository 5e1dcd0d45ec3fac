-- PostgreSQL translation of migrations/0009_reach_tokens.sql (same meaning).
CREATE TABLE reach_tokens (
    kind       TEXT NOT NULL CHECK (kind IN ('game', 'challenge')),
    item_id    BIGINT NOT NULL,
    token      TEXT NOT NULL,
    issued_at  DOUBLE PRECISION NOT NULL,
    user_only  INTEGER NOT NULL CHECK (user_only IN (0, 1)),
    followups  INTEGER NOT NULL DEFAULT 0 CHECK (followups >= 0),
    PRIMARY KEY (kind, item_id)
);
