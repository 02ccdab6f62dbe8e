-- One row per person who played in the NBA, ABA or BAA (1947-2026): the bbref family's career list, the only
-- complete one, with what the other families add for the same person (matched by name without accents and
-- birth date, within a year: the families disagree on a few), country, school and draft from
-- kaggle_common_player_info, and this season's roster from nbacom_player_profiles. Names are compared
-- without accents, punctuation or suffixes ('Jimmy Butler III' is 'Jimmy Butler', 'A.J.' is 'AJ'). Heights in inches and weights in pounds as numbers; 'NA' is NULL.
WITH career AS (
    SELECT player_id AS bbref_id, player, regexp_replace(regexp_replace(strip_accents(lower(player)), '\b(jr|sr|ii|iii|iv)\b', '', 'g'), '[^a-z]', '', 'g') AS name_key,
           TRY_CAST(NULLIF(birth_date, 'NA') AS DATE) AS birth_date,
           TRY_CAST(NULLIF(ht_in_in, 'NA') AS INTEGER) AS height_in,
           TRY_CAST(NULLIF(wt, 'NA') AS INTEGER) AS weight_lb,
           NULLIF(pos, 'NA') AS position,
           NULLIF(colleges, 'NA') AS colleges,
           "from" AS first_season, "to" AS last_season,
           TRY_CAST(NULLIF(debut, 'NA') AS TIMESTAMP)::DATE AS debut_date,
           hof AS hall_of_fame
    FROM {{ source('nba', 'bbref_player_career_info') }}
), kaggle AS (
    SELECT person_id, regexp_replace(regexp_replace(strip_accents(lower(display_first_last)), '\b(jr|sr|ii|iii|iv)\b', '', 'g'), '[^a-z]', '', 'g') AS name_key, CAST(birthdate AS DATE) AS born,
           NULLIF(country, '') AS country, NULLIF(school, '') AS school,
           TRY_CAST(draft_year AS INTEGER) AS draft_year, TRY_CAST(draft_round AS INTEGER) AS draft_round,
           TRY_CAST(draft_number AS INTEGER) AS draft_pick
    FROM {{ source('nba', 'kaggle_common_player_info') }}
), current_roster AS (
    SELECT PLAYER_ID, regexp_replace(regexp_replace(strip_accents(lower(PLAYER_NAME)), '\b(jr|sr|ii|iii|iv)\b', '', 'g'), '[^a-z]', '', 'g') AS name_key, CAST(BIRTHDATE AS DATE) AS born,
           PLAYER_NAME, HEIGHT, WEIGHT, POSITION, FROM_YEAR, COUNTRY, SCHOOL, DRAFT_YEAR, DRAFT_ROUND, DRAFT_NUMBER
    FROM {{ source('nba', 'nbacom_player_profiles') }}
), matched AS (
SELECT c.player, c.birth_date,
       coalesce(r.COUNTRY, k.country) AS country,
       coalesce(c.colleges, r.SCHOOL, k.school) AS college,
       c.height_in, c.weight_lb, c.position,
       c.first_season, c.last_season, c.last_season - c.first_season + 1 AS seasons_played, c.debut_date,
       coalesce(r.DRAFT_YEAR, k.draft_year) AS draft_year,
       coalesce(r.DRAFT_ROUND, k.draft_round) AS draft_round,
       coalesce(r.DRAFT_NUMBER, k.draft_pick) AS draft_pick,
       c.hall_of_fame,
       r.PLAYER_ID IS NOT NULL AS active,
       c.bbref_id, coalesce(r.PLAYER_ID, k.person_id) AS nba_person_id
FROM career AS c
LEFT JOIN kaggle AS k ON k.name_key = c.name_key AND abs(date_diff('day', k.born, c.birth_date)) <= 366
LEFT JOIN current_roster AS r ON r.name_key = c.name_key AND abs(date_diff('day', r.born, c.birth_date)) <= 366
QUALIFY row_number() OVER (PARTITION BY c.bbref_id ORDER BY abs(date_diff('day', r.born, c.birth_date)) NULLS LAST,
                                                        abs(date_diff('day', k.born, c.birth_date)) NULLS LAST) = 1
)
SELECT m.*, kp.first_name, kp.last_name
FROM matched AS m
LEFT JOIN {{ source('nba', 'kaggle_player') }} AS kp ON kp.id = m.nba_person_id
UNION ALL BY NAME     -- on this season's roster without a game in bbref's career list yet
SELECT PLAYER_NAME AS player, born AS birth_date, COUNTRY AS country, SCHOOL AS college,
       TRY_CAST(split_part(HEIGHT, '-', 1) AS INTEGER) * 12 + TRY_CAST(split_part(HEIGHT, '-', 2) AS INTEGER)
           AS height_in, WEIGHT AS weight_lb, POSITION AS position, FROM_YEAR + 1 AS first_season,
       DRAFT_YEAR AS draft_year, DRAFT_ROUND AS draft_round, DRAFT_NUMBER AS draft_pick, false AS hall_of_fame,
       true AS active, PLAYER_ID AS nba_person_id
FROM current_roster
WHERE PLAYER_ID NOT IN (SELECT nba_person_id FROM matched WHERE active)
