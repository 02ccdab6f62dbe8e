-- One row per game 1996-2023 with both teams' extra numbers (kaggle_other_stats): points in the paint, second
-- chance and fast-break points, largest lead, lead changes, times tied, turnovers; home and away teams by
-- abbreviation, with the game's date.
SELECT o.game_id, a.game_date, a.season, o.team_abbreviation_home AS home_team, o.team_abbreviation_away AS away_team,
       o.pts_paint_home AS home_points_in_paint, o.pts_paint_away AS away_points_in_paint,
       o.pts_2nd_chance_home AS home_second_chance_points, o.pts_2nd_chance_away AS away_second_chance_points,
       o.pts_fb_home AS home_fast_break_points, o.pts_fb_away AS away_fast_break_points,
       o.largest_lead_home AS home_largest_lead, o.largest_lead_away AS away_largest_lead,
       o.lead_changes, o.times_tied,
       o.total_turnovers_home AS home_turnovers, o.total_turnovers_away AS away_turnovers
FROM {{ source('nba', 'kaggle_other_stats') }} AS o
LEFT JOIN {{ ref('game_attendance') }} AS a USING (game_id)
