-- PostgreSQL translation of migrations/0003_fair_play.sql: the same statements in the
-- same order, including the backfill of live games' slots and seats and the expiry of
-- duplicate pending challenges (types as in 0001_init.sql: ids BIGINT, times DOUBLE
-- PRECISION; the subquery in FROM has an alias, which PostgreSQL before 16 requires).
-- Fair play on busy servers: per-server settings, limits the database enforces,
-- cooldowns, challenge consent, turn notifications, call-off proposals, stored reviews.

-- A server's settings; NULL in a column means the bot's default (its settings).
CREATE TABLE guild_settings (
    guild_id           BIGINT PRIMARY KEY,
    turn_timeout       DOUBLE PRECISION CHECK (turn_timeout > 0),
    challenge_timeout  DOUBLE PRECISION CHECK (challenge_timeout > 0),
    games_per_member   INTEGER CHECK (games_per_member BETWEEN 1 AND 5),
    server_games       INTEGER CHECK (server_games BETWEEN 1 AND 100),
    challenge_cooldown DOUBLE PRECISION CHECK (challenge_cooldown >= 0),
    review_cooldown    DOUBLE PRECISION CHECK (review_cooldown >= 0),
    reviews            INTEGER CHECK (reviews IN (0, 1)),
    updated_at         DOUBLE PRECISION NOT NULL
);

-- The channels where games may be started; a server with no rows here allows all.
CREATE TABLE game_channels (
    guild_id   BIGINT NOT NULL,
    channel_id BIGINT NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
);

-- The server-wide cap on live games: each live game holds one numbered slot of its
-- server, below the cap, and no two live games of a server hold the same one.
ALTER TABLE games ADD COLUMN guild_slot INTEGER CHECK (guild_slot BETWEEN 0 AND 99);
UPDATE games SET guild_slot = (
    SELECT COUNT(*) FROM games AS o
    WHERE o.guild_id = games.guild_id AND o.status IN ('active', 'bot_to_move') AND o.id < games.id
) WHERE status IN ('active', 'bot_to_move');
CREATE UNIQUE INDEX games_live_per_guild_slot
    ON games (guild_id, guild_slot)
    WHERE status IN ('active', 'bot_to_move');

-- Each game's turn clock, from its server's settings when it started (NULL in games
-- from before this migration: the bot's TURN_TIMEOUT_SECONDS).
ALTER TABLE games ADD COLUMN turn_seconds DOUBLE PRECISION CHECK (turn_seconds > 0);

-- The per-member limit: each member of a live game holds one numbered seat in its
-- server, below the limit; ending the game frees its seats.
CREATE TABLE live_seats (
    guild_id BIGINT NOT NULL,
    user_id  BIGINT NOT NULL,
    slot     INTEGER NOT NULL CHECK (slot >= 0),
    game_id  BIGINT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    PRIMARY KEY (guild_id, user_id, slot)
);
CREATE INDEX live_seats_by_game ON live_seats (game_id);
INSERT INTO live_seats (guild_id, user_id, slot, game_id)
    SELECT guild_id, user_id,
           ROW_NUMBER() OVER (PARTITION BY guild_id, user_id ORDER BY id) - 1, id
    FROM (SELECT id, guild_id, x_id AS user_id FROM games
          WHERE status IN ('active', 'bot_to_move') AND x_id IS NOT NULL
          UNION ALL
          SELECT id, guild_id, o_id FROM games
          WHERE status IN ('active', 'bot_to_move') AND o_id IS NOT NULL) AS live_players;

-- One pending challenge per challenger per server. Older duplicates expire first.
UPDATE challenges SET status = 'expired'
    WHERE status = 'pending' AND id NOT IN (
        SELECT MAX(id) FROM challenges WHERE status = 'pending' GROUP BY guild_id, challenger_id
    );
CREATE UNIQUE INDEX challenges_pending_per_challenger
    ON challenges (guild_id, challenger_id)
    WHERE status = 'pending';
-- Whether the challenge's message notified its opponent (a challenge pings at most once
-- per cooldown: an exempt rematch within it is posted without a ping).
-- Whether a game already had its rematch challenge (the first is exempt from cooldowns).
CREATE INDEX challenges_by_rematch ON challenges (rematch_of) WHERE rematch_of IS NOT NULL;
ALTER TABLE challenges ADD COLUMN pinged INTEGER NOT NULL DEFAULT 1 CHECK (pinged IN (0, 1));

-- Cooldowns: until when a member may not do ``action`` again (to ``target``: the
-- challenged member for 'challenge', 0 when the action has no target).
CREATE TABLE cooldowns (
    guild_id BIGINT NOT NULL,
    user_id  BIGINT NOT NULL,
    action   TEXT NOT NULL,
    target   BIGINT NOT NULL DEFAULT 0,
    until    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (guild_id, user_id, action, target)
);

-- Members who turned challenges to them off, per server.
CREATE TABLE challenge_blocks (
    guild_id BIGINT NOT NULL,
    user_id  BIGINT NOT NULL,
    since    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (guild_id, user_id)
);

-- The message that told a member game's player it is their turn (at most one per game).
CREATE TABLE turn_pings (
    game_id    BIGINT PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    channel_id BIGINT NOT NULL,
    message_id BIGINT NOT NULL,
    user_id    BIGINT NOT NULL,
    move_no    INTEGER NOT NULL,   -- the move it announced
    reminder   INTEGER NOT NULL DEFAULT 0 CHECK (reminder IN (0, 1))
);

-- A player's proposal to call a rated game off (unrated), valid at the move it was made.
CREATE TABLE calloffs (
    game_id     BIGINT PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    proposer_id BIGINT NOT NULL,
    move_no     INTEGER NOT NULL,
    message_id  BIGINT,
    created_at  DOUBLE PRECISION NOT NULL
);

-- An ended game's review, computed once (the engine's Review, as JSON).
CREATE TABLE reviews (
    game_id BIGINT PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    review  TEXT NOT NULL
);
