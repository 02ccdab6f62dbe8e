-- One row per player and season type of 2025-26 (the nbacom family, the only one with this season's numbers):
-- totals, per-game averages and advanced ratings side by side. season_type is 'Regular Season' or 'Playoffs'.
-- Percentages are 0-1 fractions.
WITH seasons AS (
    SELECT 'Regular Season' AS season_type, t.*, g.PTS AS ppg, g.REB AS rpg, g.AST AS apg, g.STL AS spg,
           g.BLK AS bpg, g.MIN AS mpg, a.OFF_RATING, a.DEF_RATING, a.NET_RATING, a.TS_PCT, a.EFG_PCT, a.USG_PCT, a.PIE
    FROM {{ source('nba', 'nbacom_player_totals') }} AS t
    JOIN {{ source('nba', 'nbacom_player_per_game') }} AS g USING (PLAYER_ID)
    LEFT JOIN {{ source('nba', 'nbacom_player_advanced') }} AS a USING (PLAYER_ID)
    UNION ALL BY NAME
    SELECT 'Playoffs' AS season_type, t.*, g.PTS AS ppg, g.REB AS rpg, g.AST AS apg, g.STL AS spg,
           g.BLK AS bpg, g.MIN AS mpg, a.OFF_RATING, a.DEF_RATING, a.NET_RATING, a.TS_PCT, a.EFG_PCT, a.USG_PCT, a.PIE
    FROM {{ source('nba', 'nbacom_po_player_totals') }} AS t
    JOIN {{ source('nba', 'nbacom_po_player_per_game') }} AS g USING (PLAYER_ID)
    LEFT JOIN {{ source('nba', 'nbacom_po_player_advanced') }} AS a USING (PLAYER_ID)
)
SELECT 2026 AS season, season_type, PLAYER_NAME AS player, TEAM_ABBREVIATION AS team, CAST(AGE AS INTEGER) AS age,
       GP AS games, W AS wins, L AS losses, MIN AS minutes,
       PTS AS points, REB AS rebounds, OREB AS offensive_rebounds, DREB AS defensive_rebounds, AST AS assists,
       STL AS steals, BLK AS blocks, TOV AS turnovers, PF AS fouls,
       FGM AS field_goals_made, FGA AS field_goals_attempted, FG_PCT AS field_goal_pct,
       FG3M AS threes_made, FG3A AS threes_attempted, FG3_PCT AS three_point_pct,
       FTM AS free_throws_made, FTA AS free_throws_attempted, FT_PCT AS free_throw_pct,
       PLUS_MINUS AS plus_minus, DD2 AS double_doubles, TD3 AS triple_doubles,
       ppg AS points_per_game, rpg AS rebounds_per_game, apg AS assists_per_game, spg AS steals_per_game,
       bpg AS blocks_per_game, mpg AS minutes_per_game,
       OFF_RATING AS offensive_rating, DEF_RATING AS defensive_rating, NET_RATING AS net_rating,
       TS_PCT AS true_shooting_pct, EFG_PCT AS effective_fg_pct, USG_PCT AS usage_pct, PIE AS player_impact_estimate,
       PLAYER_ID AS nba_person_id
FROM seasons
