-- Indexes for the foreign keys that point at games, for erasing a server's data.
-- Deleting a game makes SQLite look for the rows that reference it (games.rematch_of,
-- challenges.game_id and challenges.rematch_of); without an index each look-up reads
-- the whole table. Erasing a server of 2,000 games in a database of 10,000 took 6-9 s,
-- holding the one connection every server's clicks wait for; with these, 23-28 ms
-- (python bench/erase.py [--no-fk-indexes]).
-- Partial: most rows hold NULL there, and NULL never needs looking up.
CREATE INDEX games_by_rematch_of ON games (rematch_of) WHERE rematch_of IS NOT NULL;
CREATE INDEX challenges_by_game ON challenges (game_id) WHERE game_id IS NOT NULL;
CREATE INDEX challenges_by_rematch_of ON challenges (rematch_of) WHERE rematch_of IS NOT NULL;
