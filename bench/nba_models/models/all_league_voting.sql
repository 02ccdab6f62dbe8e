-- One row per player receiving votes for an end-of-season team, 1963-2025 (bbref_end_of_season_teams_voting):
-- All-NBA, All-Defense, All-Rookie; points won of the most possible, the share, and first/second/third-team
-- votes. team_number is the team he was named to ('1st', '2nd', '3rd'; '1T'... a tie; 'ORV' = other players
-- receiving votes).
SELECT season, lg AS league, type AS selection, number_tm AS team_number, player, position, age,
       TRY_CAST(pts_won AS DOUBLE) AS points_won, TRY_CAST(pts_max AS DOUBLE) AS points_max,
       TRY_CAST(share AS DOUBLE) AS vote_share, TRY_CAST(x1st_tm AS INTEGER) AS first_team_votes,
       TRY_CAST(x2nd_tm AS INTEGER) AS second_team_votes, TRY_CAST(x3rd_tm AS INTEGER) AS third_team_votes,
       player_id AS bbref_id
FROM {{ source('nba', 'bbref_end_of_season_teams_voting') }}
