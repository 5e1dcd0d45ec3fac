-- PostgreSQL translation of migrations/0005_locale.sql (same statements).
-- The language of a game's and a challenge's shared messages: the server's Discord
-- locale when it was created (an interaction's guild_locale), so that the board, the
-- turn notifications and the sweep's redraws, which have no interaction to ask, all
-- read the same. NULL (games from before this migration): English.
ALTER TABLE games ADD COLUMN locale TEXT;
ALTER TABLE challenges ADD COLUMN locale TEXT;
