-- One row per game 1946-2023 with its date and attendance (kaggle_game_info, where some games are listed
-- twice); the teams of these games are in kaggle_other_stats for the games it covers. season is the year the season ends (a game in
-- November 2015 belongs to 2016).
SELECT game_id, CAST(game_date AS DATE) AS game_date,
       CAST(year(game_date) + CASE WHEN month(game_date) >= 8 THEN 1 ELSE 0 END AS INTEGER) AS season,
       CAST(attendance AS INTEGER) AS attendance
FROM {{ source('nba', 'kaggle_game_info') }}
QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY attendance DESC NULLS LAST) = 1
