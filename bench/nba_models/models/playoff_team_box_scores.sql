-- One row per team and game of the 2026 playoffs (nbacom_boxscore_team_game): points by quarter, the final
-- score, home or away, and the team's game totals (paint, fast-break and bench points, biggest lead).
SELECT game_id, CAST(game_time_utc AS DATE) AS game_date, tricode AS team, isHome AS is_home,
       q1, q2, q3, q4, score, reboundsTotal AS rebounds, assists, steals, blocks, turnovers,
       fieldGoalsPercentage AS field_goal_pct, threePointersPercentage AS three_point_pct,
       pointsInThePaint AS points_in_paint, pointsFastBreak AS fast_break_points, benchPoints AS bench_points,
       biggestLead AS biggest_lead, leadChanges AS lead_changes, timesTied AS times_tied
FROM {{ source('nba', 'nbacom_boxscore_team_game') }}
