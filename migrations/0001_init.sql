-- Initial schema of the tic-tac-toe bot.
-- Player ids are Discord snowflakes; NULL as a game's x_id/o_id/winner_id means this bot.
-- Times are Unix seconds (REAL) from the service's clock.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE games (
    id            INTEGER PRIMARY KEY,
    guild_id      INTEGER NOT NULL,
    channel_id    INTEGER NOT NULL,
    -- 0 while the game must be the only live one in its channel, NULL when it need not
    -- be (NULLs never collide in the unique index below).
    channel_slot  INTEGER CHECK (channel_slot IS NULL OR channel_slot = 0),
    message_id    INTEGER,
    x_id          INTEGER,
    o_id          INTEGER,
    bot_level     TEXT,
    width         INTEGER NOT NULL CHECK (width BETWEEN 3 AND 5),
    height        INTEGER NOT NULL CHECK (height BETWEEN 3 AND 5),
    k             INTEGER NOT NULL CHECK (k >= 3 AND k <= max(width, height)),
    moves         TEXT NOT NULL DEFAULT '',   -- 0-based cells, comma-separated, in order
    move_no       INTEGER NOT NULL DEFAULT 0 CHECK (move_no BETWEEN 0 AND width * height),
    status        TEXT NOT NULL
                  CHECK (status IN ('active', 'bot_to_move', 'finished', 'abandoned')),
    result        TEXT CHECK (result IN ('win', 'draw', 'forfeit', 'timeout', 'abandoned')),
    winner_id     INTEGER,
    winner_mark   TEXT CHECK (winner_mark IN ('X', 'O')),
    rated         INTEGER NOT NULL DEFAULT 0 CHECK (rated IN (0, 1)),
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    turn_deadline REAL,
    rematch_of    INTEGER REFERENCES games (id) ON DELETE SET NULL,
    -- A bot game has exactly one human; a member game has two.
    CHECK ((bot_level IS NULL AND x_id IS NOT NULL AND o_id IS NOT NULL)
        OR (bot_level IS NOT NULL AND (x_id IS NULL) <> (o_id IS NULL))),
    CHECK ((status IN ('active', 'bot_to_move')) = (result IS NULL)),
    -- move_no is the number of cells in moves (so a half-written row cannot exist).
    CHECK (move_no = CASE WHEN moves = '' THEN 0
                          ELSE length(moves) - length(replace(moves, ',', '')) + 1 END)
);

-- One live game per channel, enforced by the database (see channel_slot).
CREATE UNIQUE INDEX games_live_per_channel
    ON games (guild_id, channel_id, channel_slot)
    WHERE status IN ('active', 'bot_to_move');
-- Live games of a channel (active_game, stop, AlreadyPlaying).
CREATE INDEX games_live_by_channel
    ON games (guild_id, channel_id)
    WHERE status IN ('active', 'bot_to_move');
-- Deadline sweeps and restarts.
CREATE INDEX games_by_deadline ON games (turn_deadline) WHERE status = 'active';
CREATE INDEX games_bot_to_move ON games (id) WHERE status = 'bot_to_move';
-- History: a guild's ended games, and each player's, newest first.
CREATE INDEX games_ended_by_guild
    ON games (guild_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
CREATE INDEX games_by_x ON games (guild_id, x_id, updated_at DESC);
CREATE INDEX games_by_o ON games (guild_id, o_id, updated_at DESC);

CREATE TABLE challenges (
    id            INTEGER PRIMARY KEY,
    guild_id      INTEGER NOT NULL,
    channel_id    INTEGER NOT NULL,
    message_id    INTEGER,
    challenger_id INTEGER NOT NULL,
    opponent_id   INTEGER NOT NULL CHECK (opponent_id <> challenger_id),
    width         INTEGER NOT NULL CHECK (width BETWEEN 3 AND 5),
    height        INTEGER NOT NULL CHECK (height BETWEEN 3 AND 5),
    k             INTEGER NOT NULL CHECK (k >= 3 AND k <= max(width, height)),
    first         TEXT NOT NULL CHECK (first IN ('me', 'opponent', 'random')),
    status        TEXT NOT NULL
                  CHECK (status IN ('pending', 'accepted', 'declined', 'expired', 'withdrawn')),
    created_at    REAL NOT NULL,
    expires_at    REAL NOT NULL,
    game_id       INTEGER REFERENCES games (id) ON DELETE SET NULL,
    rematch_of    INTEGER REFERENCES games (id) ON DELETE SET NULL
);

-- Expiry sweeps, and the pending challenges of a channel.
CREATE INDEX challenges_pending_by_expiry ON challenges (expires_at) WHERE status = 'pending';
CREATE INDEX challenges_pending_by_channel
    ON challenges (guild_id, channel_id)
    WHERE status = 'pending';

-- One row per member per guild: Elo between members and the streaks over all games.
CREATE TABLE players (
    guild_id       INTEGER NOT NULL,
    user_id        INTEGER NOT NULL,
    rating         REAL NOT NULL DEFAULT 1500.0,
    rated_games    INTEGER NOT NULL DEFAULT 0 CHECK (rated_games >= 0),
    wins           INTEGER NOT NULL DEFAULT 0 CHECK (wins >= 0),
    losses         INTEGER NOT NULL DEFAULT 0 CHECK (losses >= 0),
    draws          INTEGER NOT NULL DEFAULT 0 CHECK (draws >= 0),
    current_streak INTEGER NOT NULL DEFAULT 0,
    best_streak    INTEGER NOT NULL DEFAULT 0 CHECK (best_streak >= 0),
    updated_at     REAL NOT NULL,
    PRIMARY KEY (guild_id, user_id),
    CHECK (rated_games = wins + losses + draws)
) WITHOUT ROWID;

-- The leaderboard lists members with at least one rated game.
CREATE INDEX players_leaderboard
    ON players (guild_id, rating DESC, rated_games DESC, user_id)
    WHERE rated_games > 0;

-- Results against the bot, per member, guild and level; Elo is not affected.
CREATE TABLE bot_records (
    guild_id INTEGER NOT NULL,
    user_id  INTEGER NOT NULL,
    level    TEXT NOT NULL,
    wins     INTEGER NOT NULL DEFAULT 0 CHECK (wins >= 0),
    losses   INTEGER NOT NULL DEFAULT 0 CHECK (losses >= 0),
    draws    INTEGER NOT NULL DEFAULT 0 CHECK (draws >= 0),
    PRIMARY KEY (guild_id, user_id, level)
) WITHOUT ROWID;
