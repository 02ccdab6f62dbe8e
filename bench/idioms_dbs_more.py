"""The second half of bench/idioms_dbs.py's databases: ``survey``, ``sales_star`` and ``logs`` (the generators;
idioms_dbs.py builds all six). Kept apart only so that each file stays readable."""
from __future__ import annotations

import datetime as dt
import random

import duckdb
from idioms_dbs_base import FIRST, LAST, QUERIES, insert, moment, weighted

# ------------------------------------------------------------------------------------------ survey
SURVEY_COUNTRIES = {"Germany": (26, ["Bavaria", "Berlin", "Hesse", "Saxony", "Hamburg"], "de"),
                    "France": (18, ["Ile-de-France", "Occitanie", "Brittany", "Provence"], "fr"),
                    "Spain": (9, ["Madrid", "Catalonia", "Andalusia"], "es"),
                    "Netherlands": (12, ["North Holland", "Utrecht", "South Holland"], "nl"),
                    "United Kingdom": (20, ["London", "Scotland", "North West", "Wales"], "en"),
                    "Canada": (15, ["Ontario", "Quebec", "British Columbia"], "en")}
COMMENTS = ["More flexible hours would help.", "Great team, poor tooling.", "Too many meetings.",
            "Commute is exhausting.", "I like the new office.", "Salary is below market.",
            "Management communicates well.", "Onboarding was confusing.", "Happy overall."]


def build_survey(con: duckdb.DuckDBPyConnection, rng: random.Random) -> None:
    scores = ", ".join(f"score_q{i} INTEGER" for i in range(1, 13))
    con.execute(f"""
        CREATE TABLE responses (response_id INTEGER, submitted_at TIMESTAMP, wave VARCHAR, panel_source VARCHAR,
            country VARCHAR, region VARCHAR, city_size VARCHAR, age_years VARCHAR, gender VARCHAR,
            education VARCHAR, employment VARCHAR, industry VARCHAR, job_level VARCHAR, team_size VARCHAR,
            years_in_role VARCHAR, remote_days INTEGER, commute_min INTEGER, income_band VARCHAR,
            household_size INTEGER, has_children BOOLEAN, {scores}, nps INTEGER, overall_satisfaction INTEGER,
            would_recommend BOOLEAN, device VARCHAR, browser VARCHAR, survey_language VARCHAR,
            completion_seconds INTEGER, attention_check_passed BOOLEAN, comment VARCHAR, weight DOUBLE,
            consent_marketing BOOLEAN);
        COMMENT ON TABLE responses IS 'Workplace survey extract, one row per response (2024 spring and autumn waves)';
    """)
    rows = []
    country_pairs = [(c, w) for c, (w, _, _) in SURVEY_COUNTRIES.items()]
    mood_of = {"Germany": 0.1, "France": -0.2, "Spain": 0.3, "Netherlands": 0.4, "United Kingdom": -0.1,
               "Canada": 0.2}
    for rid in range(1, 801):
        wave = "2024-spring" if rid <= 430 else "2024-autumn"
        base = dt.datetime(2024, 3, 4) if wave == "2024-spring" else dt.datetime(2024, 9, 16)
        submitted = base + dt.timedelta(days=rng.randrange(21), hours=rng.randrange(7, 23), minutes=rng.randrange(60),
                                        seconds=rng.randrange(60))
        country = weighted(rng, country_pairs)
        _, regions, lang = SURVEY_COUNTRIES[country]
        age = rng.randint(21, 66)
        mood = rng.gauss(mood_of[country] + (0.15 if wave == "2024-autumn" else 0.0), 1.0)
        score = [None if rng.random() < 0.04 else min(5, max(1, round(3.2 + mood * 0.9 + rng.gauss(i % 3 * 0.15, 0.8))))
                 for i in range(12)]
        satisfaction = min(10, max(1, round(6.2 + mood * 1.7 + rng.gauss(0, 0.8))))
        nps = min(10, max(0, round(6.8 + mood * 1.9 + rng.gauss(0, 1.0))))
        device = weighted(rng, [("desktop", 55), ("mobile", 35), ("tablet", 10)])
        seconds = int(rng.lognormvariate(6.6, 0.45) * (1.3 if device == "mobile" else 1.0))
        if rng.random() < 0.012:
            seconds = rng.randint(3700, 9000)                              # left the tab open
        remote = weighted(rng, [(0, 20), (1, 12), (2, 25), (3, 22), (4, 8), (5, 13)])
        rows.append((rid, submitted, wave, weighted(rng, [("panel_a", 50), ("panel_b", 30), ("newsletter", 20)]),
                     country, rng.choice(regions), weighted(rng, [("large city", 45), ("town", 35), ("rural", 20)]),
                     "n/a" if rng.random() < 0.03 else str(age),
                     weighted(rng, [("female", 47), ("male", 49), ("non-binary", 2), ("not stated", 2)]),
                     weighted(rng, [("secondary", 22), ("bachelor", 41), ("master", 30), ("doctorate", 7)]),
                     weighted(rng, [("full-time", 72), ("part-time", 18), ("contractor", 10)]),
                     weighted(rng, [("software", 24), ("finance", 14), ("health", 15), ("retail", 12),
                                    ("manufacturing", 16), ("public sector", 11), ("education", 8)]),
                     weighted(rng, [("individual contributor", 58), ("team lead", 24), ("manager", 13),
                                    ("director", 5)]),
                     str(rng.choice([1, 3, 4, 5, 6, 8, 10, 12, 15, 20, 35])), str(min(age - 20, rng.randint(0, 18))),
                     remote, 0 if remote == 5 else rng.randint(5, 75),
                     weighted(rng, [("<30k", 12), ("30-50k", 30), ("50-80k", 33), ("80-120k", 18), (">120k", 7)]),
                     weighted(rng, [(1, 25), (2, 33), (3, 17), (4, 18), (5, 7)]), rng.random() < 0.42,
                     *score, nps, satisfaction, nps >= 8 if rng.random() < 0.9 else nps >= 5, device,
                     weighted(rng, [("chrome", 52), ("safari", 26), ("firefox", 12), ("edge", 10)]), lang, seconds,
                     rng.random() > 0.05, rng.choice(COMMENTS) if rng.random() < 0.3 else None,
                     round(rng.uniform(0.6, 1.6), 3), rng.random() < 0.37))
    insert(con, "responses", rows)


# ------------------------------------------------------------------------------------------ sales_star
STORES = [("North", "Hamburg", "Hamburg Hafen"), ("North", "Bremen", "Bremen Mitte"), ("North", "Kiel", "Kiel Forde"),
          ("South", "Munich", "Munich Marienplatz"), ("South", "Stuttgart", "Stuttgart Koenigstrasse"),
          ("South", "Nuremberg", "Nuremberg Altstadt"), ("East", "Berlin", "Berlin Alexanderplatz"),
          ("East", "Leipzig", "Leipzig Zentrum"), ("East", "Dresden", "Dresden Neustadt"),
          ("West", "Cologne", "Cologne Dom"), ("West", "Dusseldorf", "Dusseldorf Koe"), ("West", "Essen", "Essen Ruhr")]
STAR_CATEGORIES = {"electronics": (["Voltix", "Nordtek", "Sonara"], (40, 400)),
                   "home": (["Casa Viva", "Nordtek", "Hygge Home"], (8, 120)),
                   "toys": (["Playmo Kids", "Casa Viva", "Blocky"], (6, 80)),
                   "apparel": (["Urban Thread", "Alpenwear", "Sonara"], (12, 150)),
                   "grocery": (["Fresh Farm", "Hygge Home", "Bio Garten"], (2, 25)),
                   "sports": (["Alpenwear", "Voltix", "Peak Motion"], (10, 220))}
STAR_NOUNS = {"electronics": ["Tablet", "Smartwatch", "Headphones", "E-Reader", "Speaker", "Camera"],
              "home": ["Throw Blanket", "Vase", "Candle Set", "Cushion", "Lamp", "Rug"],
              "toys": ["Puzzle", "Building Set", "Plush Bear", "Board Game", "Race Car", "Kite"],
              "apparel": ["Jacket", "Sweater", "Scarf", "Jeans", "Rain Coat", "Cap"],
              "grocery": ["Coffee Beans", "Olive Oil", "Granola", "Green Tea", "Honey", "Pasta"],
              "sports": ["Running Shoes", "Yoga Mat", "Tennis Racket", "Bike Helmet", "Backpack", "Water Bottle"]}
MONTH_WEIGHT = [8, 7, 8, 8, 9, 9, 9, 9, 9, 10, 13, 16]


def build_sales_star(con: duckdb.DuckDBPyConnection, rng: random.Random) -> None:
    con.execute("""
        CREATE TABLE dim_date (date_key INTEGER PRIMARY KEY, full_date DATE, year INTEGER, quarter INTEGER,
                               month INTEGER, month_name VARCHAR, day_name VARCHAR, is_weekend BOOLEAN,
                               is_holiday BOOLEAN);
        CREATE TABLE dim_store (store_key INTEGER PRIMARY KEY, store_code VARCHAR, store_name VARCHAR, city VARCHAR,
                                region VARCHAR, opened_on DATE, floor_area_m2 INTEGER);
        CREATE TABLE dim_product (product_key INTEGER PRIMARY KEY, sku VARCHAR, product_name VARCHAR,
                                  category VARCHAR, brand VARCHAR, unit_cost DECIMAL(8, 2), list_price DECIMAL(8, 2));
        CREATE TABLE dim_customer (customer_key INTEGER PRIMARY KEY, customer_name VARCHAR, segment VARCHAR,
                                   city VARCHAR, birth_date DATE, loyalty_tier VARCHAR, joined_on DATE);
        CREATE TABLE fact_sales (sale_id INTEGER PRIMARY KEY, date_key INTEGER, store_key INTEGER,
                                 product_key INTEGER, customer_key INTEGER, quantity INTEGER,
                                 unit_price DECIMAL(8, 2), discount_pct INTEGER, net_amount DECIMAL(10, 2));
        COMMENT ON TABLE fact_sales IS 'One row per sales receipt line, 2023-2025';
        COMMENT ON COLUMN fact_sales.date_key IS 'dim_date.date_key (yyyymmdd)';
        COMMENT ON COLUMN fact_sales.customer_key IS
            'dim_customer.customer_key; NULL for walk-in customers without a loyalty card';
        COMMENT ON COLUMN fact_sales.net_amount IS 'quantity * unit_price after the discount, EUR';
        COMMENT ON TABLE dim_date IS 'Calendar dimension, one row per day';
    """)
    holidays = {(1, 1), (5, 1), (10, 3), (12, 25), (12, 26)}
    dates = []
    day = dt.date(2023, 1, 1)
    while day <= dt.date(2025, 12, 31):
        dates.append((int(day.strftime("%Y%m%d")), day, day.year, (day.month - 1) // 3 + 1, day.month,
                      day.strftime("%B"), day.strftime("%A"), day.weekday() >= 5, (day.month, day.day) in holidays))
        day += dt.timedelta(days=1)
    insert(con, "dim_date", dates)

    stores = [(k, f"ST{k:02d}", name, city, region, dt.date(2008, 1, 1) + dt.timedelta(days=rng.randrange(4000)),
               rng.randrange(600, 2400, 10)) for k, (region, city, name) in enumerate(STORES, start=1)]
    insert(con, "dim_store", stores)

    products, seen = [], set()
    for k in range(1, 81):
        cat = list(STAR_CATEGORIES)[(k - 1) % 6]
        brands, (lo, hi) = STAR_CATEGORIES[cat]
        brand, price = rng.choice(brands), round(rng.uniform(lo, hi), 2)
        name = f"{brand} {rng.choice(STAR_NOUNS[cat])}"
        while name in seen:
            name = f"{brand} {rng.choice(STAR_NOUNS[cat])} {rng.choice(['Mini', 'Plus', 'Pro', 'XL', 'II'])}"
        seen.add(name)
        products.append((k, f"P-{5000 + k}", name, cat, brand, round(price * rng.uniform(0.45, 0.7), 2), price))
    insert(con, "dim_product", products)

    customers = []
    for k in range(1, 601):
        customers.append((k, f"{rng.choice(FIRST)} {rng.choice(LAST)}",
                          weighted(rng, [("consumer", 70), ("small business", 20), ("corporate", 10)]),
                          rng.choice([s[1] for s in STORES]),
                          dt.date(1950, 1, 1) + dt.timedelta(days=rng.randrange(365 * 54)),
                          weighted(rng, [("none", 50), ("silver", 32), ("gold", 18)]),
                          dt.date(2015, 1, 1) + dt.timedelta(days=rng.randrange(3600))))
    insert(con, "dim_customer", customers)

    store_w = [rng.choice([3, 4, 5, 6, 8]) for _ in stores]
    year_w = {2023: 10, 2024: 12, 2025: 14}
    day_w = [year_w[d[2]] * MONTH_WEIGHT[d[4] - 1] * (13 if d[7] else 10) for d in dates]
    keys = [d[0] for d in dates] + rng.choices([d[0] for d in dates], weights=day_w, k=7000 - len(dates))
    sales = []
    for sid, dk in enumerate(sorted(keys), start=1):
        prod = rng.choice(products)
        qty = weighted(rng, [(1, 55), (2, 25), (3, 10), (4, 6), (6, 4)])
        price = round(float(prod[6]) * rng.choice([1.0, 1.0, 0.95, 1.05]), 2)
        disc = weighted(rng, [(0, 70), (5, 12), (10, 12), (20, 6)])
        sales.append((sid, dk, rng.choices(stores, weights=store_w)[0][0], prod[0],
                      None if rng.random() < 0.15 else rng.randint(1, 600), qty, price, disc,
                      round(qty * price * (100 - disc) / 100, 2)))
    insert(con, "fact_sales", sales)


# ------------------------------------------------------------------------------------------ logs
SERVICES = [("api-gateway", 34), ("auth", 16), ("payments", 14), ("search", 15), ("orders", 12),
            ("notifications", 9)]
LEVELS = {"api-gateway": [("INFO", 78), ("WARN", 12), ("ERROR", 6), ("DEBUG", 4)],
          "auth": [("INFO", 70), ("WARN", 18), ("ERROR", 5), ("DEBUG", 7)],
          "payments": [("INFO", 66), ("WARN", 10), ("ERROR", 17), ("DEBUG", 7)],
          "search": [("INFO", 74), ("WARN", 8), ("ERROR", 4), ("DEBUG", 14)],
          "orders": [("INFO", 80), ("WARN", 9), ("ERROR", 7), ("DEBUG", 4)],
          "notifications": [("INFO", 60), ("WARN", 24), ("ERROR", 11), ("DEBUG", 5)]}
ROUTES = [("GET /api/orders", 30, 140), ("GET /api/products", 35, 60), ("POST /api/cart", 20, 95),
          ("GET /api/search", 15, 110)]
TEAMS = [("team-alpha", 22), ("team-beta", 15), ("finance", 20), ("marketing", 18), ("legal", 8), ("design", 17)]
FILES = [("logo.png", 14), ("budget.xlsx", 9), ("minutes.docx", 11), ("export.csv", 8), ("contract.v2.pdf", 6),
         ("roadmap.pptx", 5), ("backup.tar.gz", 4), ("photo.jpeg", 7), ("data.2024.csv", 5)]
EMAIL_DOMAINS = [("gmail.com", 31), ("outlook.com", 22), ("acme.io", 17), ("proton.me", 9), ("yahoo.com", 12),
                 ("web.de", 6), ("contoso.com", 3)]
CLIENT_VERSIONS = [("1.8.2", 5), ("1.9.0", 7), ("1.9.4", 14), ("1.10.0", 12), ("1.10.3", 17), ("1.11.1", 18),
                   ("1.12.0", 15), ("1.12.3", 12)]
RELEASES = {"api-gateway": ["3.8.0", "3.9.0", "3.9.2", "3.10.0", "3.10.1", "3.11.0", "3.9.3"],
            "auth": ["1.2.0", "1.3.0", "1.4.0", "1.9.0", "1.10.0", "1.10.2", "1.9.1"],
            "payments": ["2.7.0", "2.8.0", "2.9.0", "2.9.5", "2.10.0", "2.9.6"],
            "search": ["0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.12.1", "0.13.0"],
            "orders": ["4.1.0", "4.2.0", "4.2.1", "4.9.0", "4.10.0", "4.11.0", "4.10.1"],
            "notifications": ["1.0.0", "1.1.0", "1.2.0", "1.8.0", "1.9.0", "1.9.9", "1.10.0"]}


def log_message(rng: random.Random, service: str, level: str) -> str:
    if service == "api-gateway":
        route, ms = weighted(rng, [((r, m), w) for r, w, m in ROUTES])
        if level == "ERROR":
            upstream = rng.choice(["payments", "orders", "search"])
            return f"upstream timeout after {rng.choice([3000, 5000])}ms: {upstream}"
        if level == "WARN":
            return f"slow response: {route} took {rng.randint(1500, 4000)}ms"
        return f"{route} {rng.choice([200, 200, 200, 201, 304])} in {max(5, int(rng.gauss(ms, ms / 3)))}ms"
    user = rng.randint(1000, 1999)
    if service == "auth":
        return {"INFO": f"login ok user={user}", "WARN": f"login failed user={user} reason=bad_password",
                "ERROR": "token service unreachable", "DEBUG": f"token refreshed user={user}"}[level]
    if service == "payments":
        order = f"O-{rng.randint(20000, 29999)}"
        return {"INFO": f"charge ok order={order} amount={rng.uniform(5, 400):.2f} EUR",
                "WARN": f"charge declined order={order} code=insufficient_funds",
                "ERROR": f"bank timeout after {rng.choice([5000, 8000])}ms order={order}",
                "DEBUG": f"fraud score order={order} score={rng.random():.2f}"}[level]
    if service == "search":
        q = weighted(rng, QUERIES)
        return {"INFO": f'query="{q}" hits={rng.randint(0, 90)} in {rng.randint(3, 60)}ms',
                "WARN": f'query="{q}" hits=0', "ERROR": "index shard 3 unavailable",
                "DEBUG": f'query="{q}" rewritten'}[level]
    if service == "orders":
        return {"INFO": f"order O-{rng.randint(20000, 29999)} created items={rng.randint(1, 6)}",
                "WARN": "inventory low sku=SKU-1021", "ERROR": "database deadlock, retrying",
                "DEBUG": "cache miss orders:list"}[level]
    return {"INFO": f"push sent device={rng.choice(['android', 'ios'])}", "WARN": "email bounced",
            "ERROR": "smtp connection refused", "DEBUG": "batch flushed"}[level]


def build_logs(con: duckdb.DuckDBPyConnection, rng: random.Random) -> None:
    con.execute("""
        CREATE TABLE service_logs (log_id INTEGER PRIMARY KEY, logged_at TIMESTAMP, line VARCHAR);
        CREATE TABLE uploads (upload_id INTEGER PRIMARY KEY, uploaded_at TIMESTAMP, file_path VARCHAR,
                              size_bytes BIGINT, uploader_email VARCHAR);
        CREATE TABLE accounts (account_id INTEGER PRIMARY KEY, email VARCHAR, created_on DATE, prefs VARCHAR,
                               client_version VARCHAR);
        CREATE TABLE releases (service VARCHAR, version VARCHAR, released_at TIMESTAMP);
        COMMENT ON COLUMN service_logs.line IS 'Raw log line: LEVEL|service|message';
        COMMENT ON COLUMN accounts.prefs IS 'User preferences as key=value pairs separated by semicolons';
    """)
    hours = [2, 2, 1, 1, 1, 2, 4, 7, 9, 10, 10, 9, 9, 10, 10, 9, 8, 7, 6, 5, 4, 4, 3, 2]
    logs = []
    for _ in range(3000):
        service = weighted(rng, SERVICES)
        level = weighted(rng, LEVELS[service])
        when = moment(rng, dt.datetime(2024, 8, 1), 31, hours)
        logs.append((when, f"{level}|{service}|{log_message(rng, service, level)}"))
    logs.sort(key=lambda r: r[0])
    insert(con, "service_logs", [(i, t, line) for i, (t, line) in enumerate(logs, start=1)])

    people = [f"{rng.choice(FIRST).lower()}.{rng.choice(LAST).lower()}" for _ in range(60)]
    uploads = []
    for uid in range(1, 601):
        when = moment(rng, dt.datetime(2024, 1, 1), 335, hours)
        name = weighted(rng, FILES) if rng.random() < 0.55 else f"scan_{uid:04d}.{rng.choice(['pdf', 'pdf', 'png'])}"
        ext = name.rsplit(".", 1)[1]
        size = int(rng.lognormvariate({"zip": 17, "gz": 18, "pptx": 15.5, "png": 13.5, "jpeg": 14}.get(ext, 12.5), 0.7))
        uploads.append((uid, when, f"/srv/uploads/{when.year}/{when.month:02d}/{weighted(rng, TEAMS)}/{name}", size,
                        f"{rng.choice(people)}@{weighted(rng, [('acme.io', 70), ('partner.example', 30)])}"))
    insert(con, "uploads", uploads)

    accounts = []
    for aid in range(1, 401):
        local = f"{rng.choice(FIRST).lower()}{rng.choice(['.', '_', ''])}{rng.choice(LAST).lower()}{rng.randint(1, 99)}"
        prefs = {}
        if rng.random() < 0.8:
            prefs["theme"] = weighted(rng, [("light", 55), ("dark", 45)])
        if rng.random() < 0.75:
            prefs["lang"] = weighted(rng, [("en", 40), ("de", 25), ("fr", 15), ("es", 12), ("nl", 8)])
        if rng.random() < 0.5:
            prefs["tz"] = rng.choice(["Europe/Berlin", "Europe/Paris", "Europe/London", "America/New_York"])
        if rng.random() < 0.3:
            prefs["digest"] = rng.choice(["daily", "weekly", "off"])
        keys = list(prefs)
        rng.shuffle(keys)
        accounts.append((aid, f"{local}@{weighted(rng, EMAIL_DOMAINS)}",
                         dt.date(2021, 1, 1) + dt.timedelta(days=rng.randrange(1300)),
                         ";".join(f"{k}={prefs[k]}" for k in keys), weighted(rng, CLIENT_VERSIONS)))
    insert(con, "accounts", accounts)

    releases = []
    for service, versions in RELEASES.items():
        t = dt.datetime(2023, 1, 10, 9, 0)
        for v in versions:
            t += dt.timedelta(days=rng.randint(20, 70), hours=rng.randint(0, 8))
            releases.append((service, v, t))
    insert(con, "releases", releases)
