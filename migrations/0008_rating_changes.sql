-- No rating lost by accident, and none left unexplained (issue 34).
--
-- 1. Each player's rating before and after a rated game, for its finished board. NULL in
--    games that were not rated, and in those that ended before this migration.
ALTER TABLE games ADD COLUMN x_rating_before REAL;
ALTER TABLE games ADD COLUMN x_rating_after REAL;
ALTER TABLE games ADD COLUMN o_rating_before REAL;
ALTER TABLE games ADD COLUMN o_rating_after REAL;

-- 2. At most one pending rematch of a game: when both players press Rematch at once, the
--    database lets one challenge in and the other press accepts it. A second one an older
--    version let in (two processes at once) expires first.
UPDATE challenges SET status = 'expired'
    WHERE status = 'pending' AND rematch_of IS NOT NULL
    AND id NOT IN (SELECT MIN(id) FROM challenges
                   WHERE status = 'pending' AND rematch_of IS NOT NULL GROUP BY rematch_of);
CREATE UNIQUE INDEX challenges_pending_per_rematch
    ON challenges (rematch_of)
    WHERE status = 'pending';
