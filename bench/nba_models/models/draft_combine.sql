-- One row per player measured at the draft combine, 2001-2023 (kaggle_draft_combine_stats): heights with and
-- without shoes, wingspan and standing reach in inches, weight, body fat, hands, vertical leaps, agility.
SELECT season AS combine_year, player_name AS player, position, height_wo_shoes AS height_without_shoes_in,
       height_w_shoes AS height_with_shoes_in, weight AS weight_lb, wingspan AS wingspan_in,
       standing_reach AS standing_reach_in, body_fat_pct, hand_length AS hand_length_in, hand_width AS hand_width_in,
       standing_vertical_leap AS standing_vertical_in, max_vertical_leap AS max_vertical_in,
       lane_agility_time AS lane_agility_seconds, player_id AS nba_person_id
FROM {{ source('nba', 'kaggle_draft_combine_stats') }}
