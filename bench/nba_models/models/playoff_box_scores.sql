-- One row per player and game of the 2026 playoffs (nbacom_boxscore_player_game), with the game's date; minutes
-- as a number. The team's line of each game is in playoff_team_box_scores.
SELECT b.game_id, g.GAME_DATE AS game_date, b.name AS player, b.tricode AS team, b.position,
       TRY_CAST(split_part(b.minutes, ':', 1) AS INTEGER) + TRY_CAST(split_part(b.minutes, ':', 2) AS INTEGER) / 60.0
           AS minutes,
       b.points, b.reboundsTotal AS rebounds, b.assists, b.steals, b.blocks, b.turnovers,
       b.fieldGoalsMade AS field_goals_made, b.fieldGoalsAttempted AS field_goals_attempted,
       b.threePointersMade AS threes_made, b.threePointersAttempted AS threes_attempted,
       b.personId AS nba_person_id
FROM {{ source('nba', 'nbacom_boxscore_player_game') }} AS b
LEFT JOIN {{ source('nba', 'nbacom_po_games') }} AS g ON g.GAME_ID = b.game_id
