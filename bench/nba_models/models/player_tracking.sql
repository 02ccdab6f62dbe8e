-- One row per player and season type of 2025-26 (nbacom tracking: hustle, speed and possessions, regular season
-- and playoffs): contested shots, deflections, charges drawn, screen assists, loose balls, box-outs, miles run,
-- average speed, touches and time of possession.
WITH t AS (
    SELECT 'Regular Season' AS season_type, h.PLAYER_ID, h.PLAYER_NAME, h.TEAM_ABBREVIATION, h.G, h.MIN,
           h.CONTESTED_SHOTS, h.DEFLECTIONS, h.CHARGES_DRAWN, h.SCREEN_ASSISTS, h.LOOSE_BALLS_RECOVERED, h.BOX_OUTS,
           s.DIST_MILES, s.AVG_SPEED, p.TOUCHES, p.TIME_OF_POSS
    FROM {{ source('nba', 'nbacom_player_hustle') }} AS h
    LEFT JOIN {{ source('nba', 'nbacom_player_speed') }} AS s USING (PLAYER_ID)
    LEFT JOIN {{ source('nba', 'nbacom_player_possessions') }} AS p USING (PLAYER_ID)
    UNION ALL
    SELECT 'Playoffs', h.PLAYER_ID, h.PLAYER_NAME, h.TEAM_ABBREVIATION, h.G, h.MIN,
           h.CONTESTED_SHOTS, h.DEFLECTIONS, h.CHARGES_DRAWN, h.SCREEN_ASSISTS, h.LOOSE_BALLS_RECOVERED, h.BOX_OUTS,
           s.DIST_MILES, s.AVG_SPEED, p.TOUCHES, p.TIME_OF_POSS
    FROM {{ source('nba', 'nbacom_po_player_hustle') }} AS h
    LEFT JOIN {{ source('nba', 'nbacom_po_player_speed') }} AS s USING (PLAYER_ID)
    LEFT JOIN {{ source('nba', 'nbacom_po_player_possessions') }} AS p USING (PLAYER_ID)
)
SELECT 2026 AS season, season_type, PLAYER_NAME AS player, TEAM_ABBREVIATION AS team, G AS games,
       MIN AS minutes_per_game, CONTESTED_SHOTS AS contested_shots, DEFLECTIONS AS deflections,
       CHARGES_DRAWN AS charges_drawn, SCREEN_ASSISTS AS screen_assists,
       LOOSE_BALLS_RECOVERED AS loose_balls_recovered, BOX_OUTS AS box_outs,
       DIST_MILES AS miles_run, AVG_SPEED AS average_speed_mph, TOUCHES AS touches,
       TIME_OF_POSS AS time_of_possession, PLAYER_ID AS nba_person_id
FROM t
