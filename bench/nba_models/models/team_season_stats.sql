-- One row per team and season, 1947-2026 (the bbref family): per-game averages, season totals, what opponents
-- averaged, and points per 100 possessions (from 1974, when possessions are known). season is the year the
-- season ends; numbers stored as text with 'NA' are typed here; 'League Average' rows left out.
SELECT g.season, g.lg AS league, g.team, g.abbreviation,
       TRY_CAST(g.g AS INTEGER) AS games,
       TRY_CAST(g.pts_per_game AS DOUBLE) AS points_per_game,
       TRY_CAST(g.trb_per_game AS DOUBLE) AS rebounds_per_game,
       TRY_CAST(g.ast_per_game AS DOUBLE) AS assists_per_game,
       TRY_CAST(g.stl_per_game AS DOUBLE) AS steals_per_game,
       TRY_CAST(g.blk_per_game AS DOUBLE) AS blocks_per_game,
       TRY_CAST(g.tov_per_game AS DOUBLE) AS turnovers_per_game,
       TRY_CAST(g.fg_percent AS DOUBLE) AS field_goal_pct,
       TRY_CAST(g.x3p_per_game AS DOUBLE) AS threes_made_per_game,
       TRY_CAST(g.x3pa_per_game AS DOUBLE) AS threes_attempted_per_game,
       TRY_CAST(g.x3p_percent AS DOUBLE) AS three_point_pct,
       TRY_CAST(g.ft_percent AS DOUBLE) AS free_throw_pct,
       TRY_CAST(t.pts AS INTEGER) AS points, TRY_CAST(t.trb AS INTEGER) AS rebounds,
       TRY_CAST(t.ast AS INTEGER) AS assists, TRY_CAST(t.x3p AS INTEGER) AS threes_made,
       TRY_CAST(o.opp_pts_per_game AS DOUBLE) AS opponent_points_per_game,
       TRY_CAST(o.opp_fg_percent AS DOUBLE) AS opponent_field_goal_pct,
       TRY_CAST(ot.opp_pts AS INTEGER) AS opponent_points,
       TRY_CAST(h.pts_per_100_poss AS DOUBLE) AS points_per_100_possessions,
       TRY_CAST(oh.opp_pts_per_100_poss AS DOUBLE) AS opponent_points_per_100_possessions
FROM {{ source('nba', 'bbref_team_stats_per_game') }} AS g
LEFT JOIN {{ source('nba', 'bbref_team_totals') }} AS t USING (season, lg, team)
LEFT JOIN {{ source('nba', 'bbref_opponent_stats_per_game') }} AS o USING (season, lg, team)
LEFT JOIN {{ source('nba', 'bbref_opponent_totals') }} AS ot USING (season, lg, team)
LEFT JOIN {{ source('nba', 'bbref_team_stats_per_100_poss') }} AS h USING (season, lg, team)
LEFT JOIN {{ source('nba', 'bbref_opponent_stats_per_100_poss') }} AS oh USING (season, lg, team)
WHERE g.team <> 'League Average'
