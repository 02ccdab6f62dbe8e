-- One row per game of 2025-26, regular season and playoffs (nbacom_games and nbacom_po_games: the only
-- family with this season's scores). Teams by abbreviation and full name; winner is the winning team's
-- abbreviation. Earlier seasons' games (kaggle_game_info, 1946-2023) have dates and attendance only: in
-- game_attendance.
WITH g AS (
    SELECT 'Regular Season' AS season_type, * FROM {{ source('nba', 'nbacom_games') }}
    UNION ALL
    SELECT 'Playoffs' AS season_type, * FROM {{ source('nba', 'nbacom_po_games') }}
)
SELECT g.GAME_ID AS game_id, g.GAME_DATE AS game_date, 2026 AS season, g.season_type,
       g.HOME_TEAM AS home_team, h.full_name AS home_team_name,
       g.AWAY_TEAM AS away_team, a.full_name AS away_team_name,
       g.HOME_PTS AS home_points, g.AWAY_PTS AS away_points,
       CASE WHEN g.HOME_WL = 'W' THEN g.HOME_TEAM ELSE g.AWAY_TEAM END AS winner,
       CASE WHEN g.HOME_WL = 'W' THEN g.AWAY_TEAM ELSE g.HOME_TEAM END AS loser,
       g.HOME_PTS + g.AWAY_PTS AS total_points, abs(g.HOME_PTS - g.AWAY_PTS) AS margin,
       g.HOME_FG_PCT AS home_fg_pct, g.AWAY_FG_PCT AS away_fg_pct,
       g.HOME_FG3_PCT AS home_three_pct, g.AWAY_FG3_PCT AS away_three_pct
FROM g
LEFT JOIN {{ source('nba', 'kaggle_team') }} AS h ON h.abbreviation = g.HOME_TEAM
LEFT JOIN {{ source('nba', 'kaggle_team') }} AS a ON a.abbreviation = g.AWAY_TEAM
