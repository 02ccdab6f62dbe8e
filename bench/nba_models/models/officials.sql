-- One row per referee and game, 1996-2023 (kaggle_officials), with the game's date (kaggle_game_info).
SELECT o.game_id, CAST(g.game_date AS DATE) AS game_date, o.official_id,
       o.first_name || ' ' || o.last_name AS official, o.jersey_num AS jersey_number
FROM {{ source('nba', 'kaggle_officials') }} AS o
LEFT JOIN (SELECT game_id, min(game_date) AS game_date FROM {{ source('nba', 'kaggle_game_info') }} GROUP BY game_id) AS g
    USING (game_id)
