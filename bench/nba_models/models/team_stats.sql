-- One row per team for 2025-26 (the nbacom family, this season only): standings (wins, losses, conference,
-- streaks, home and road records), per-game averages, advanced ratings and what opponents averaged.
-- Percentages are 0-1 fractions.
SELECT 2026 AS season, s.TEAM_NAME AS team, s.TEAM_ABBREVIATION AS abbreviation, s.CONFERENCE AS conference,
       s.WINS AS wins, s.LOSSES AS losses, s.WIN_PCT AS win_pct, s.PLAYOFF_RANK AS conference_rank,
       s.CONFERENCE_GB AS games_behind, s.HOME AS home_record, s.ROAD AS road_record, s.L10 AS last_10,
       s.CURRENT_STREAK AS streak, s.CLINCHED_PLAYOFF = 1 AS clinched_playoffs,
       g.PTS AS points_per_game, g.REB AS rebounds_per_game, g.AST AS assists_per_game, g.STL AS steals_per_game,
       g.BLK AS blocks_per_game, g.TOV AS turnovers_per_game, g.FG_PCT AS field_goal_pct,
       g.FG3M AS threes_made_per_game, g.FG3A AS threes_attempted_per_game, g.FG3_PCT AS three_point_pct,
       g.FT_PCT AS free_throw_pct, g.PLUS_MINUS AS plus_minus_per_game,
       a.OFF_RATING AS offensive_rating, a.DEF_RATING AS defensive_rating, a.NET_RATING AS net_rating,
       a.PACE AS pace, a.TS_PCT AS true_shooting_pct, a.EFG_PCT AS effective_fg_pct,
       o.PTS AS opponent_points_per_game, o."FG%" AS opponent_field_goal_pct, o."3P%" AS opponent_three_point_pct,
       s.TEAM_ID AS team_id
FROM {{ source('nba', 'nbacom_standings') }} AS s
LEFT JOIN {{ source('nba', 'nbacom_team_per_game') }} AS g ON g.TEAM_ID = s.TEAM_ID
LEFT JOIN {{ source('nba', 'nbacom_team_advanced') }} AS a ON a.TEAM_ID = s.TEAM_ID
LEFT JOIN {{ source('nba', 'nbacom_team_opponent') }} AS o ON o.Team = s.TEAM_NAME
