-- Turn notifications only when needed, and the limits that keep pings from being a
-- weapon (issue 22).
--
-- A server's choices (NULL: the bot's default): whether its members get turn
-- notifications unless they chose, how long a player may take before one is sent, and
-- how many different members one member's challenges may ping in ten minutes.
ALTER TABLE guild_settings ADD COLUMN turn_pings INTEGER CHECK (turn_pings IN (0, 1));
ALTER TABLE guild_settings ADD COLUMN ping_grace REAL CHECK (ping_grace >= 0);
ALTER TABLE guild_settings ADD COLUMN challenge_reach INTEGER
    CHECK (challenge_reach BETWEEN 1 AND 20);

-- A member's own choice of turn notifications in a server (no row: the server's default).
CREATE TABLE member_prefs (
    guild_id   INTEGER NOT NULL,
    user_id    INTEGER NOT NULL,
    turn_pings INTEGER NOT NULL CHECK (turn_pings IN (0, 1)),
    since      REAL NOT NULL,
    PRIMARY KEY (guild_id, user_id)
) WITHOUT ROWID;

-- The turn whose notification the channel refused (403): not tried again at that move.
CREATE TABLE ping_refusals (
    game_id INTEGER PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    move_no INTEGER NOT NULL
);

-- The challenges a member sent lately, for the cap on how many members they ping.
CREATE INDEX challenges_by_challenger ON challenges (guild_id, challenger_id, created_at);
