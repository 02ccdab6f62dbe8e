-- One row per player, season and team, 1997-2026 (bbref_player_play_by_play): time at each position, plus-minus
-- per 100 possessions, turnovers and fouls by kind, and-ones, points created by assists. season is the year the
-- season ends; 'NA' as NULL; a traded player has a row per team and a '2TM'/'3TM' row.
SELECT season, lg AS league, player, team, pos AS position, g AS games, mp AS minutes,
       TRY_CAST(pg_percent AS DOUBLE) AS share_at_point_guard, TRY_CAST(sg_percent AS DOUBLE) AS share_at_shooting_guard,
       TRY_CAST(sf_percent AS DOUBLE) AS share_at_small_forward, TRY_CAST(pf_percent AS DOUBLE) AS share_at_power_forward,
       TRY_CAST(c_percent AS DOUBLE) AS share_at_center,
       TRY_CAST(on_court_plus_minus_per_100_poss AS DOUBLE) AS on_court_plus_minus_per_100,
       TRY_CAST(net_plus_minus_per_100_poss AS DOUBLE) AS net_plus_minus_per_100,
       bad_pass_turnover AS bad_pass_turnovers, lost_ball_turnover AS lost_ball_turnovers,
       shooting_foul_committed AS shooting_fouls_committed, offensive_foul_committed AS offensive_fouls_committed,
       shooting_foul_drawn AS shooting_fouls_drawn, offensive_foul_drawn AS offensive_fouls_drawn,
       points_generated_by_assists, and1 AS and_ones, fga_blocked AS shots_blocked,
       player_id AS bbref_id
FROM {{ source('nba', 'bbref_player_play_by_play') }}
