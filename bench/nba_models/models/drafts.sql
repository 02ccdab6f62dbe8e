-- One row per draft pick, 1947-2025 (bbref_draft_pick_history, more complete than kaggle_draft_history).
-- season is the year of the draft; picks and rounds as numbers; 'NA' as NULL.
SELECT season AS draft_year, lg AS league, TRY_CAST(round AS INTEGER) AS round,
       TRY_CAST(overall_pick AS INTEGER) AS overall_pick, tm AS team, player, NULLIF(college, 'NA') AS college,
       player_id AS bbref_id
FROM {{ source('nba', 'bbref_draft_pick_history') }}
