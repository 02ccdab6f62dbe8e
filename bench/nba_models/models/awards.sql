-- One row per player and award vote, 1948-2025 (bbref_player_award_shares): MVP, Rookie, Defensive Player,
-- Sixth Man, Most Improved and Clutch Player of the Year. winner is true for the one who won it; season is
-- the year the season ends. award is the full name, award_code the short one ('nba mvp').
SELECT season, CASE split_part(award, ' ', 2)
           WHEN 'mvp' THEN 'Most Valuable Player' WHEN 'roy' THEN 'Rookie of the Year'
           WHEN 'dpoy' THEN 'Defensive Player of the Year' WHEN 'smoy' THEN 'Sixth Man of the Year'
           WHEN 'mip' THEN 'Most Improved Player' WHEN 'clutch_poy' THEN 'Clutch Player of the Year'
           ELSE award END AS award,
       upper(split_part(award, ' ', 1)) AS league, award AS award_code, player, age,
       TRY_CAST(pts_won AS DOUBLE) AS points_won, TRY_CAST(pts_max AS DOUBLE) AS points_max,
       TRY_CAST(share AS DOUBLE) AS vote_share, winner, player_id AS bbref_id
FROM {{ source('nba', 'bbref_player_award_shares') }}
