-- One row per player, season and team, 1997-2026 (bbref_player_shooting): where shots come from and how often
-- they go in, dunks, corner threes. season is the year the season ends; fractions 0-1; 'NA' as NULL.
-- A traded player has a row per team and a '2TM'/'3TM' row for the season.
SELECT season, lg AS league, player, team, pos AS position, g AS games, mp AS minutes,
       TRY_CAST(fg_percent AS DOUBLE) AS field_goal_pct,
       TRY_CAST(avg_dist_fga AS DOUBLE) AS average_shot_distance_ft,
       TRY_CAST(percent_fga_from_x3p_range AS DOUBLE) AS share_of_shots_from_three,
       TRY_CAST(percent_fga_from_x0_3_range AS DOUBLE) AS share_of_shots_at_rim,
       TRY_CAST(fg_percent_from_x3p_range AS DOUBLE) AS three_point_pct,
       TRY_CAST(fg_percent_from_x0_3_range AS DOUBLE) AS at_rim_pct,
       TRY_CAST(percent_dunks_of_fga AS DOUBLE) AS share_of_shots_dunks,
       TRY_CAST(num_of_dunks AS INTEGER) AS dunks,
       TRY_CAST(percent_corner_3s_of_3pa AS DOUBLE) AS share_of_threes_from_corner,
       TRY_CAST(corner_3_point_percent AS DOUBLE) AS corner_three_pct,
       TRY_CAST(num_heaves_attempted AS INTEGER) AS heaves_attempted,
       TRY_CAST(num_heaves_made AS INTEGER) AS heaves_made,
       player_id AS bbref_id
FROM {{ source('nba', 'bbref_player_shooting') }}
