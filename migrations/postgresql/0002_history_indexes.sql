-- PostgreSQL translation of migrations/0002_history_indexes.sql (same statements).
-- A member's history lists ended games only, so index only those. The indexes on every
-- game carried updated_at, which changes at every move, so each move rewrote two entries
-- in them. A member's history is read as two lookups, one per mark; these partial
-- indexes give each one its rows in the history's order.
DROP INDEX games_by_x;
DROP INDEX games_by_o;
CREATE INDEX games_ended_by_x
    ON games (guild_id, x_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
CREATE INDEX games_ended_by_o
    ON games (guild_id, o_id, updated_at DESC, id DESC)
    WHERE status IN ('finished', 'abandoned');
