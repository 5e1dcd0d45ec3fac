-- No channel held for nothing, no repeated pings (issue 37, items 6 and 10).
--
-- A server's choices (NULL: the bot's default): how long the first move of a game may
-- take before the game is aborted, how long a declined challenge keeps its challenger
-- from challenging that member again, and how long a member who left a game without a
-- move waits before the next.
ALTER TABLE guild_settings ADD COLUMN first_move_timeout REAL CHECK (first_move_timeout > 0);
ALTER TABLE guild_settings ADD COLUMN decline_cooldown REAL CHECK (decline_cooldown >= 0);
ALTER TABLE guild_settings ADD COLUMN abandon_cooldown REAL CHECK (abandon_cooldown >= 0);

-- The last declined proposal to call a game off: its proposer may propose again from
-- move ``again_at`` on.
CREATE TABLE calloff_declines (
    game_id     INTEGER PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    proposer_id INTEGER NOT NULL,
    again_at    INTEGER NOT NULL
);
