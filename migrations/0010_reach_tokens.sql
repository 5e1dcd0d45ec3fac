-- Play anywhere (issue 36): games and challenges outside servers that added the bot are
-- kept under guild id 0 (bot/reach.py) and reached through interactions alone. For each,
-- the token of its last interaction whose original message is its board or challenge,
-- when Discord issued it (its age says whether it still works: never learned from a 401),
-- whether only a user install authorized it (then Discord takes 5 follow-ups a token),
-- and how many follow-ups (turn notifications) went through it.
CREATE TABLE reach_tokens (
    kind       TEXT NOT NULL CHECK (kind IN ('game', 'challenge')),
    item_id    INTEGER NOT NULL,
    token      TEXT NOT NULL,
    issued_at  REAL NOT NULL,
    user_only  INTEGER NOT NULL CHECK (user_only IN (0, 1)),
    followups  INTEGER NOT NULL DEFAULT 0 CHECK (followups >= 0),
    PRIMARY KEY (kind, item_id)
);
