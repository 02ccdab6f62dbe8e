-- One row per player named to an end-of-season team, 1947-2025 (bbref_end_of_season_teams): All-NBA,
-- All-Defense, All-Rookie (and the ABA's and BAA's). team_number is 1st, 2nd or 3rd.
SELECT season, lg AS league, type AS selection, number_tm AS team_number, player, position,
       player_id AS bbref_id
FROM {{ source('nba', 'bbref_end_of_season_teams') }}
