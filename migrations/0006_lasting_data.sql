-- Data that stays right over years.
--
-- 1. Ids are never reused. games and challenges were INTEGER PRIMARY KEY without
--    AUTOINCREMENT: once the highest rows were deleted (/tictactoe-forget-server), SQLite
--    gave their ids again, and buttons of the old messages, which carry the id, acted on
--    the new game or challenge. Both tables are rebuilt with AUTOINCREMENT, rows and ids
--    as they are (SQLite's documented rebuild: the migration runner turns foreign keys
--    off around it and checks them all before it commits, bot/store/migrate.py; the
--    tables that point at these ones name them, so they follow the rebuilt tables).
--    sqlite_sequence starts at the largest id copied.
-- 2. alive: when each process (by the shards it runs) was last seen alive, so a start
--    after an outage gives the players back the time nobody could play.
-- 3. left_guilds: servers the bot was removed from, erased LEFT_SERVER_DAYS later.
-- 4. Indexes for the sweep's pruning (each a partial or small index, read in batches).

CREATE TABLE games_rebuilt (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
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
    guild_slot    INTEGER CHECK (guild_slot BETWEEN 0 AND 99),
    turn_seconds  REAL CHECK (turn_seconds > 0),
    locale        TEXT,
    -- A bot game has exactly one human; a member game has two.
    CHECK ((bot_level IS NULL AND x_id IS NOT NULL AND o_id IS NOT NULL)
        OR (bot_level IS NOT NULL AND (x_id IS NULL) <> (o_id IS NULL))),
    CHECK ((status IN ('active', 'bot_to_move')) = (result IS NULL)),
    -- move_no is the number of cells in moves (so a half-written row cannot exist).
    CHECK (move_no = CASE WHEN moves = '' THEN 0
                          ELSE length(moves) - length(replace(moves, ',', '')) + 1 END)
);
INSERT INTO games_rebuilt (id, guild_id, channel_id, channel_slot, message_id, x_id, o_id,
    bot_level, width, height, k, moves, move_no, status, result, winner_id, winner_mark,
    rated, created_at, updated_at, turn_deadline, rematch_of, guild_slot, turn_seconds, locale)
    SELECT id, guild_id, channel_id, channel_slot, message_id, x_id, o_id,
    bot_level, width, height, k, moves, move_no, status, result, winner_id, winner_mark,
    rated, created_at, updated_at, turn_deadline, rematch_of, guild_slot, turn_seconds, locale
    FROM games ORDER BY id;
DROP TABLE games;
ALTER TABLE games_rebuilt RENAME TO games;

CREATE UNIQUE INDEX games_live_per_channel
    ON games (guild_id, channel_id, channel_slot)
    WHERE status IN ('active', 'bot_to_move');
CREATE INDEX games_live_by_channel
    ON games (guild_id, channel_id)
    WHERE status IN ('active', 'bot_to_move');
CREATE INDEX games_by_deadline ON games (turn_deadline) WHERE status = 'active';
CREATE INDEX games_bot_to_move ON games (id) WHERE status = 'bot_to_move';
CREATE INDEX games_ended_by_guild
    ON games (guild_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
CREATE INDEX games_ended_by_x
    ON games (guild_id, x_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
CREATE INDEX games_ended_by_o
    ON games (guild_id, o_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
CREATE UNIQUE INDEX games_live_per_guild_slot
    ON games (guild_id, guild_slot)
    WHERE status IN ('active', 'bot_to_move');
CREATE INDEX games_by_rematch_of ON games (rematch_of) WHERE rematch_of IS NOT NULL;

CREATE TABLE challenges_rebuilt (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
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
    rematch_of    INTEGER REFERENCES games (id) ON DELETE SET NULL,
    pinged        INTEGER NOT NULL DEFAULT 1 CHECK (pinged IN (0, 1)),
    locale        TEXT
);
INSERT INTO challenges_rebuilt (id, guild_id, channel_id, message_id, challenger_id,
    opponent_id, width, height, k, first, status, created_at, expires_at, game_id,
    rematch_of, pinged, locale)
    SELECT id, guild_id, channel_id, message_id, challenger_id,
    opponent_id, width, height, k, first, status, created_at, expires_at, game_id,
    rematch_of, pinged, locale
    FROM challenges ORDER BY id;
DROP TABLE challenges;
ALTER TABLE challenges_rebuilt RENAME TO challenges;

CREATE INDEX challenges_pending_by_expiry ON challenges (expires_at) WHERE status = 'pending';
CREATE INDEX challenges_pending_by_channel
    ON challenges (guild_id, channel_id)
    WHERE status = 'pending';
CREATE UNIQUE INDEX challenges_pending_per_challenger
    ON challenges (guild_id, challenger_id)
    WHERE status = 'pending';
CREATE INDEX challenges_by_rematch ON challenges (rematch_of) WHERE rematch_of IS NOT NULL;
CREATE INDEX challenges_by_game ON challenges (game_id) WHERE game_id IS NOT NULL;
CREATE INDEX challenges_by_rematch_of ON challenges (rematch_of) WHERE rematch_of IS NOT NULL;

-- When each process was last alive: key '*' for one that runs every shard, else
-- 'count:id' for each shard it runs.
CREATE TABLE alive (
    key      TEXT PRIMARY KEY,
    alive_at REAL NOT NULL
) WITHOUT ROWID;

-- Servers the bot was removed from (GUILD_DELETE that was not an outage), and when.
CREATE TABLE left_guilds (
    guild_id INTEGER PRIMARY KEY,
    left_at  REAL NOT NULL
);

-- Pruning: ended challenges by when they ended at the latest, cooldowns by when they run
-- out, ended games by their end (stored reviews, and HISTORY_DAYS).
CREATE INDEX challenges_ended_by_expiry ON challenges (expires_at) WHERE status <> 'pending';
CREATE INDEX cooldowns_by_until ON cooldowns (until);
CREATE INDEX games_ended_by_time ON games (updated_at) WHERE status IN ('finished', 'abandoned');
