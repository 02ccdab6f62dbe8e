-- One row per shot of 2025-26 (nbacom_shot, regular season and playoffs): who took it, where from (distance in
-- feet from the basket; loc_x and loc_y in tenths of feet) and whether it went in.
SELECT s.season_type, p.PLAYER_NAME AS player, sqrt(s.loc_x * s.loc_x + s.loc_y * s.loc_y) / 10 AS distance_ft,
       s.shot_made_flag = 1 AS made, s.loc_x, s.loc_y, s.player_id AS nba_person_id
FROM {{ source('nba', 'nbacom_shot') }} AS s
LEFT JOIN {{ source('nba', 'nbacom_player_profiles') }} AS p ON p.PLAYER_ID = s.player_id
