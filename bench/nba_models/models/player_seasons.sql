-- One row per player, season and team, 1947-2026 (bbref_player_season_info): a player traded during a season
-- has one row per team and one with team '2TM' (or '3TM') for the season as a whole. season is the year the
-- season ends (2026 = 2025-26). Box-score statistics of earlier seasons are not in this warehouse; this
-- season's are in player_stats.
SELECT season, lg AS league, player, TRY_CAST(NULLIF(age, 'NA') AS INTEGER) AS age, team, pos AS position,
       experience AS years_of_experience, player_id AS bbref_id
FROM {{ source('nba', 'bbref_player_season_info') }}
