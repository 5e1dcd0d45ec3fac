-- A member's history lists ended games only, so index only those. The indexes on every
-- game carried updated_at, which changes at every move: each move rewrote two entries in
-- them, a third of the pages (and WAL) a move writes. bot/storage.py reads a member's
-- history as two lookups, one per mark; these partial indexes give each one its rows in
-- the history's order, so SQLite merges the two without sorting or reading other games.
DROP INDEX games_by_x;
DROP INDEX games_by_o;
CREATE INDEX games_ended_by_x
    ON games (guild_id, x_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
CREATE INDEX games_ended_by_o
    ON games (guild_id, o_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
