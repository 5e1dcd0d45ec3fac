-- PostgreSQL translation of migrations/0006_lasting_data.sql.
-- 1. Ids are never reused here already: games.id and challenges.id are identity columns,
--    whose sequences never go back. Nothing to rebuild.
-- 2. alive: when each process (by the shards it runs) was last seen alive.
-- 3. left_guilds: servers the bot was removed from, erased LEFT_SERVER_DAYS later.
-- 4. Indexes for the sweep's pruning.

CREATE TABLE alive (
    key      TEXT PRIMARY KEY,
    alive_at DOUBLE PRECISION NOT NULL
);

CREATE TABLE left_guilds (
    guild_id BIGINT PRIMARY KEY,
    left_at  DOUBLE PRECISION NOT NULL
);

CREATE INDEX challenges_ended_by_expiry ON challenges (expires_at) WHERE status <> 'pending';
CREATE INDEX cooldowns_by_until ON cooldowns (until);
CREATE INDEX games_ended_by_time ON games (updated_at) WHERE status IN ('finished', 'abandoned');
