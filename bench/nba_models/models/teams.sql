-- One row per current franchise (the 30 teams of 2025-26): names and home from kaggle_team, arena, owner and
-- staff from kaggle_team_details (25 of the 30 listed there), conference from this season's nbacom_standings.
SELECT t.full_name AS team, t.abbreviation, t.nickname, t.city, t.state,
       CAST(t.year_founded AS INTEGER) AS year_founded,
       s.CONFERENCE AS conference,
       d.arena, CAST(d.arenacapacity AS INTEGER) AS arena_capacity,
       d.owner, d.generalmanager AS general_manager, d.headcoach AS head_coach,
       d.dleagueaffiliation AS g_league_affiliate,
       t.id AS team_id
FROM {{ source('nba', 'kaggle_team') }} AS t
LEFT JOIN {{ source('nba', 'kaggle_team_details') }} AS d ON d.team_id = t.id
LEFT JOIN {{ source('nba', 'nbacom_standings') }} AS s ON s.TEAM_ID = t.id
