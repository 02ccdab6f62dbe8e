-- One row per All-Star selection, 1951-2026 (bbref_all_star_selections); season is the year the season ends;
-- replaced is true for a player who was selected but replaced.
SELECT season, lg AS league, player, team AS all_star_team, replaced, player_id AS bbref_id
FROM {{ source('nba', 'bbref_all_star_selections') }}
