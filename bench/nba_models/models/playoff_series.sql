-- One row per playoff series of 2026 (nbacom_po_series): the two teams, games won by each, the round and the
-- winner (abbreviations).
SELECT 2026 AS season, round, round_name, team1, team2, team1_wins, team2_wins, winner,
       CASE WHEN winner = team1 THEN team2 ELSE team1 END AS loser, series_status AS result,
       first_game_date, last_game_date
FROM {{ source('nba', 'nbacom_po_series') }}
