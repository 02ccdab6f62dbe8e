-- One row per team and season, 1947-2026 (bbref_team_summaries and bbref_team_stats_per_game, the only
-- family that goes back that far). season is the year the season ends (2016 = 2015-16). Numbers typed;
-- the 'League Average' rows left out. made_playoffs says whether the team reached the playoffs.
SELECT s.season, s.lg AS league, s.team, s.abbreviation,
       TRY_CAST(s.w AS INTEGER) AS wins, TRY_CAST(s.l AS INTEGER) AS losses,
       TRY_CAST(s.w AS DOUBLE) / nullif(TRY_CAST(s.w AS DOUBLE) + TRY_CAST(s.l AS DOUBLE), 0) AS win_pct,
       s.playoffs AS made_playoffs,
       TRY_CAST(p.pts_per_game AS DOUBLE) AS points_per_game,
       TRY_CAST(s.mov AS DOUBLE) AS margin_of_victory,
       TRY_CAST(s.srs AS DOUBLE) AS srs,
       TRY_CAST(s.o_rtg AS DOUBLE) AS offensive_rating,
       TRY_CAST(s.d_rtg AS DOUBLE) AS defensive_rating,
       TRY_CAST(s.n_rtg AS DOUBLE) AS net_rating,
       TRY_CAST(s.pace AS DOUBLE) AS pace,
       TRY_CAST(s.age AS DOUBLE) AS average_age,
       NULLIF(s.arena, 'NA') AS arena,
       TRY_CAST(s.attend AS INTEGER) AS attendance,
       TRY_CAST(s.attend_g AS INTEGER) AS attendance_per_game
FROM {{ source('nba', 'bbref_team_summaries') }} AS s
LEFT JOIN {{ source('nba', 'bbref_team_stats_per_game') }} AS p
       ON p.season = s.season AND p.team = s.team AND p.lg = s.lg
WHERE s.team <> 'League Average'
