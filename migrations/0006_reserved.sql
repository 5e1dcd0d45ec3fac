-- Reserved for the data-retention migration (issue 23), written on its own branch; this
-- file only keeps the numbers without a gap here and gives way to it when both merge.
SELECT 1;
