-- PostgreSQL translation of migrations/0004_privacy.sql (same statements).
-- Indexes for the foreign keys that point at games, for erasing a server's data.
-- Deleting a game makes the database look for the rows that reference it
-- (games.rematch_of, challenges.game_id and challenges.rematch_of), and PostgreSQL, like
-- SQLite, does not index the referencing side of a foreign key by itself: without these
-- each look-up reads the whole table.
-- Partial: most rows hold NULL there, and NULL never needs looking up.
CREATE INDEX games_by_rematch_of ON games (rematch_of) WHERE rematch_of IS NOT NULL;
CREATE INDEX challenges_by_game ON challenges (game_id) WHERE game_id IS NOT NULL;
CREATE INDEX challenges_by_rematch_of ON challenges (rematch_of) WHERE rematch_of IS NOT NULL;
