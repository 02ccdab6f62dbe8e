-- One row per name a current franchise has played under (kaggle_team_history): city and nickname, the years it
-- was used (year_active_till 2019 means still in use when the list was made), with the franchise's current name.
SELECT t.full_name AS franchise, h.city, h.nickname, h.city || ' ' || h.nickname AS team_name,
       h.year_founded AS from_year, h.year_active_till AS to_year, h.team_id
FROM {{ source('nba', 'kaggle_team_history') }} AS h
LEFT JOIN {{ source('nba', 'kaggle_team') }} AS t ON t.id = h.team_id
