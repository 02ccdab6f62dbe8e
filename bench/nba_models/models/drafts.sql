-- One row per draft pick, 1947-2025 (bbref_draft_pick_history, more complete than kaggle_draft_history).
-- season is the year of the draft; picks and rounds as numbers; 'NA' as NULL. team is the drafting team's
-- abbreviation; team_name its name at the time, from kaggle_draft_history (the same pick, NBA drafts).
SELECT b.season AS draft_year, b.lg AS league, TRY_CAST(b.round AS INTEGER) AS round,
       TRY_CAST(b.overall_pick AS INTEGER) AS overall_pick, b.tm AS team, k.team_city || ' ' || k.team_name AS team_name,
       b.player, NULLIF(b.college, 'NA') AS college, b.player_id AS bbref_id
FROM {{ source('nba', 'bbref_draft_pick_history') }} AS b
LEFT JOIN {{ source('nba', 'kaggle_draft_history') }} AS k
       ON k.season = b.season AND k.overall_pick = TRY_CAST(b.overall_pick AS INTEGER) AND b.lg = 'NBA'
QUALIFY row_number() OVER (PARTITION BY b.season, b.lg, b.overall_pick, b.player ORDER BY k.person_id) = 1
