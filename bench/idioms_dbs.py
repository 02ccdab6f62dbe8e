"""Build the DuckDB-idioms benchmark databases: six small, fresh DuckDB files whose questions need
DuckDB's own SQL (JSON paths, lists, structs, maps, dates, string splitting, COLUMNS/EXCLUDE/REPLACE,
DESCRIBE/SUMMARIZE, PIVOT) or the right grain (one row per group).

Every database is generated deterministically (``random.Random`` with a fixed seed per file, no clock,
no network, only duckdb and the standard library), so bench/idioms_dev.yaml's and
bench/idioms_heldout.yaml's gold answers never change:

- ``events.duckdb``: ``users`` (400; ``profile JSON`` with a languages array and notification flags) and
  ``app_events`` (3,000, May-July 2024; ``payload JSON`` with nested device/search/cart/order/error
  objects and arrays of items and experiment flags);
- ``catalog.duckdb``: ``suppliers`` (24; ``contact STRUCT``, ``ships_to VARCHAR[]``), ``products`` (480;
  ``tags VARCHAR[]`` most relevant first, ``dims STRUCT``, ``attributes MAP(VARCHAR, VARCHAR)``,
  ``review_stars INTEGER[]``) and ``bundles`` (30; ``product_ids INTEGER[]``);
- ``trips.duckdb``: ``zones`` (30), ``drivers`` (90; birth and licence dates) and ``trips`` (4,000,
  January-June 2024, pickup/dropoff TIMESTAMPs to the minute, fares, tips);
- ``survey.duckdb``: one wide extract ``responses`` (800 rows, 43 columns: score_q1..score_q12, demographics,
  some numbers stored as text, e.g. age 'n/a'); a table comment only;
- ``sales_star.duckdb``: a star schema ``fact_sales`` (7,000, 2023-2025, at least one sale a day) with
  ``dim_date``, ``dim_store``, ``dim_product`` and ``dim_customer``;
- ``logs.duckdb``: text to split: ``service_logs`` ('LEVEL|service|message' lines), ``uploads`` (file
  paths, uploader emails), ``accounts`` ('k=v;k=v' preferences, client versions like '1.12.3') and
  ``releases`` (service versions).

Some tables and columns carry a COMMENT, others none, as real databases do.

    .venv/bin/python bench/idioms_dbs.py --replace            # writes /tmp/duckask_idioms/*.duckdb
    .venv/bin/python bench/idioms_dbs.py --out DIR --replace
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb

DEFAULT_OUT = "/tmp/duckask_idioms"

FIRST = ["Anna", "Ben", "Carla", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Keiko", "Liam",
         "Maya", "Nils", "Olivia", "Pablo", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Walter", "Yusuf",
         "Zoe", "Marco", "Lena", "Theo", "Priya", "Sven", "Aisha", "Mateo", "Chloe", "Ravi", "Ida", "Tomasz"]
LAST = ["Schmidt", "Garcia", "Nguyen", "Martin", "Rossi", "Kowalski", "Dubois", "Smith", "Tanaka", "Okafor",
        "Silva", "Novak", "Jensen", "Fischer", "Moreau", "Brown", "Costa", "Haddad", "Larsen", "Weber", "Lopez",
        "Murphy", "Ivanova", "Patel", "Keller", "Berg", "Sato", "Meyer"]


def weighted(rng: random.Random, pairs: list[tuple]) -> object:
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def moment(rng: random.Random, start: dt.datetime, days: int, hour_weights: list[int]) -> dt.datetime:
    """A time on one of ``days`` days from ``start``, its hour drawn from ``hour_weights`` (24 weights)."""
    day = start + dt.timedelta(days=rng.randrange(days))
    hour = rng.choices(range(24), weights=hour_weights)[0]
    return day.replace(hour=hour, minute=rng.randrange(60), second=rng.randrange(60))


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], select: str | None = None) -> None:
    """Insert ``rows`` column-wise: one list parameter per column, unnested side by side (fast, order kept).
    ``select`` replaces the default ``unnest($1), unnest($2), ...`` (e.g. to build a MAP from two lists)."""
    if not rows:
        return
    cols = [list(c) for c in zip(*rows)]
    select = select or ", ".join(f"unnest(${i + 1})" for i in range(len(cols)))
    con.execute(f"INSERT INTO {table} SELECT {select}", cols)


# ------------------------------------------------------------------------------------------ events
OS = [("android", 46), ("ios", 38), ("web", 16)]
APP_VERSIONS = {"android": [("5.2.0", 20), ("5.3.1", 45), ("5.4.0", 35)],
                "ios": [("5.2.1", 15), ("5.3.1", 50), ("5.4.0", 35)],
                "web": [("2024.05", 40), ("2024.06", 60)]}
QUERIES = [("running shoes", 40), ("rain jacket", 31), ("yoga mat", 26), ("water bottle", 22), ("headlamp", 17),
           ("trail socks", 13), ("tent", 10), ("sunglasses", 8), ("hiking poles", 6), ("swim goggles", 5)]
SKUS = [(f"SKU-{n}", w) for n, w in [(1021, 30), (1034, 22), (1107, 18), (1110, 16), (1203, 14), (1250, 11),
                                     (1302, 9), (1333, 8), (1401, 6), (1455, 5), (1502, 4), (1520, 3)]]
SKU_PRICE = {s: round(9.9 + 7.5 * i, 2) for i, (s, _) in enumerate(SKUS)}
SCREENS = [("checkout", 34), ("search", 21), ("product", 17), ("login", 14), ("cart", 9), ("profile", 5)]
ERROR_TEXT = {500: "internal error", 503: "service unavailable", 401: "session expired", 404: "not found"}
EXPERIMENTS = ["new_checkout", "dark_mode", "one_tap_pay", "smart_search"]


def build_events(con: duckdb.DuckDBPyConnection, rng: random.Random) -> None:
    con.execute("""
        CREATE TABLE users (user_id INTEGER PRIMARY KEY, signup_date DATE, country VARCHAR, plan VARCHAR,
                            profile JSON);
        CREATE TABLE app_events (event_id INTEGER PRIMARY KEY, user_id INTEGER, event_name VARCHAR,
                                 occurred_at TIMESTAMP, payload JSON);
        COMMENT ON TABLE app_events IS 'Mobile and web app analytics events, one row per event (May-July 2024)';
        COMMENT ON COLUMN app_events.payload IS 'Event body as JSON: device {os, os_version, app_version}, '
            'session_id, and per event type search, cart, order, payment, error or share objects; '
            'experiments is an array of feature flags';
        COMMENT ON COLUMN app_events.event_name IS 'app_open, search, add_to_cart, purchase, share or error';
    """)
    countries = [("DE", 30), ("FR", 18), ("ES", 14), ("IT", 12), ("NL", 10), ("PL", 9), ("SE", 7)]
    langs = {"DE": "de", "FR": "fr", "ES": "es", "IT": "it", "NL": "nl", "PL": "pl", "SE": "sv"}
    users, user_os = [], {}
    for uid in range(1, 401):
        c = weighted(rng, countries)
        languages = [langs[c]] + [x for x in ("en", "de", "fr") if x != langs[c] and rng.random() < 0.35]
        profile = {"display_name": f"{rng.choice(FIRST)} {rng.choice(LAST)[0]}.", "languages": languages,
                   "notifications": {"email": rng.random() < 0.62, "push": rng.random() < 0.41}}
        if rng.random() < 0.4:
            profile["referrer"] = rng.choice(["friend", "podcast", "instagram", "newsletter"])
        users.append((uid, dt.date(2022, 1, 1) + dt.timedelta(days=rng.randrange(850)), c,
                      weighted(rng, [("free", 60), ("plus", 28), ("pro", 12)]), json.dumps(profile)))
        user_os[uid] = weighted(rng, OS)
    insert(con, "users", users)

    start = dt.datetime(2024, 5, 1)
    hours = [1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 8, 9, 10, 9, 8, 8, 9, 10, 12, 13, 12, 9, 5, 2]
    names = [("app_open", 30), ("search", 26), ("add_to_cart", 18), ("purchase", 10), ("share", 6), ("error", 10)]
    plan = [(uid, "app_open") for uid in range(1, 401)]           # every user opens the app at least once
    plan += [(rng.randint(1, 400), weighted(rng, names)) for _ in range(3000 - len(plan))]
    rng.shuffle(plan)
    events, order_no = [], 10000
    for eid, (uid, name) in enumerate(plan, start=1):
        os_ = user_os[uid]
        p: dict = {"device": {"os": os_, "os_version": rng.choice(["13", "14", "15"] if os_ == "android" else
                                                                 ["17.4", "17.5"] if os_ == "ios" else ["-"]),
                              "app_version": weighted(rng, APP_VERSIONS[os_])},
                   "session_id": f"s-{rng.randrange(16**8):08x}"}
        if name == "app_open":
            p["referrer"] = weighted(rng, [("organic", 60), ("push", 25), ("email", 15)])
        elif name == "search":
            p["search"] = {"query": weighted(rng, QUERIES), "results": rng.randint(0, 25) * (3 if os_ == "web" else 2),
                           "filters": rng.sample(["size", "color", "price", "brand"], rng.randint(0, 2))}
        elif name in ("add_to_cart", "purchase"):
            items = []
            for sku in dict.fromkeys(weighted(rng, SKUS) for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4]))):
                items.append({"sku": sku, "qty": weighted(rng, [(1, 70), (2, 22), (3, 8)]),
                              "unit_price": SKU_PRICE[sku]})
            if name == "add_to_cart":
                p["cart"] = {"items": items, "currency": "EUR"}
            else:
                order_no += 1
                total = round(sum(i["qty"] * i["unit_price"] for i in items), 2)
                p["order"] = {"order_id": f"O-{order_no}", "items": items, "total": total, "currency": "EUR"}
                if rng.random() < 0.3:
                    p["order"]["coupon"] = rng.choice(["SUMMER10", "WELCOME5", "FREESHIP"])
                p["payment"] = {"method": weighted(rng, [("card", 52), ("paypal", 31), ("klarna", 12),
                                                         ("apple_pay", 5 if os_ == "ios" else 0)])}
        elif name == "share":
            p["share"] = {"channel": weighted(rng, [("whatsapp", 45), ("link", 30), ("email", 15), ("instagram", 10)]),
                          "sku": weighted(rng, SKUS)}
        else:
            screen = weighted(rng, SCREENS)
            code = weighted(rng, [(500, 40), (503, 20), (401, 25), (404, 15)])
            p["error"] = {"code": code, "screen": screen, "message": ERROR_TEXT[code]}
            if p["device"]["app_version"] == "5.4.0" and rng.random() < 0.5:
                p["error"]["screen"] = "checkout"
        if rng.random() < 0.3:
            p["experiments"] = sorted(rng.sample(EXPERIMENTS, rng.choice([1, 1, 2])))
        events.append((eid, uid, name, moment(rng, start, 92, hours), json.dumps(p)))
    insert(con, "app_events", events)


# ------------------------------------------------------------------------------------------ catalog
CATEGORIES = {   # category -> (brands, nouns, price range, general tags favoured)
    "lighting": (["Lumora", "Brightway", "Nordlys"], ["Desk Lamp", "Headlamp", "Floor Lamp", "LED Strip", "Lantern"],
                 (12, 180), ["rechargeable", "dimmable", "compact"]),
    "camping": (["Trailfox", "Summit", "Nordlys"], ["Tent", "Sleeping Bag", "Camp Stove", "Backpack", "Camp Chair"],
                (20, 420), ["waterproof", "ultralight", "compact"]),
    "kitchen": (["Cucina", "Ferro", "Brightway"], ["Skillet", "Kettle", "Knife Set", "Blender", "Mixing Bowl"],
                (9, 260), ["dishwasher-safe", "eco", "gift"]),
    "audio": (["Sonique", "Basswell", "Lumora"], ["Headphones", "Speaker", "Earbuds", "Soundbar", "Turntable"],
              (25, 520), ["wireless", "rechargeable", "waterproof"]),
    "garden": (["Verdea", "Ferro", "Summit"], ["Planter", "Hose", "Pruning Shears", "Bird Feeder", "Garden Light"],
               (6, 150), ["eco", "weatherproof", "handmade"]),
    "fitness": (["Pulse", "Trailfox", "Basswell"], ["Yoga Mat", "Dumbbell Set", "Jump Rope", "Kettlebell",
                                                    "Foam Roller"], (8, 300), ["eco", "compact", "gift"]),
}
GENERAL_TAGS = ["bestseller", "new", "clearance", "premium", "gift", "eco", "waterproof", "compact"]
COLORS = [("black", 30), ("white", 18), ("grey", 14), ("red", 9), ("blue", 11), ("green", 10), ("orange", 5)]
MATERIALS = [("aluminium", 22), ("steel", 16), ("plastic", 25), ("wood", 12), ("cotton", 8), ("bamboo", 6)]
BRAND_QUALITY = {"Lumora": 4.3, "Brightway": 3.6, "Nordlys": 4.1, "Trailfox": 3.9, "Summit": 4.4, "Cucina": 4.0,
                 "Ferro": 3.4, "Sonique": 4.5, "Basswell": 3.7, "Verdea": 4.2, "Pulse": 3.8}
COUNTRY_CODES = ["DE", "FR", "NL", "BE", "AT", "CH", "IT", "ES", "PL", "SE", "DK", "GB", "US", "CA", "JP"]
SUPPLIER_NAMES = ["Nordic Supply Co", "Alpine Trade GmbH", "Harbor Goods Ltd", "Sunrise Imports", "Baltic Source",
                  "Mistral Distribution", "Oakfield Wholesale", "Pacific Crest Trading", "Rhine Logistics",
                  "Tejo Commerce", "Vistula Partners", "Kiso Manufacturing", "Atlas Home Supply", "Boreal Outfitters",
                  "Cobalt Electronics", "Delta Kitchenware", "Evergreen Garden Co", "Fjord Fitness Supply",
                  "Granite Tools", "Helios Lighting", "Iberia Sourcing", "Juniper Audio", "Kestrel Outdoor",
                  "Lagoon Living"]
BUNDLE_THEMES = ["Camping", "Home Office", "Kitchen", "Garden", "Fitness", "Audio", "Weekend", "Family", "Festival",
                 "Balcony"]
BUNDLE_KINDS = ["Starter", "Deluxe", "Essentials"]
THEME_CATEGORY = {"Camping": "camping", "Home Office": "lighting", "Kitchen": "kitchen", "Garden": "garden",
                  "Fitness": "fitness", "Audio": "audio"}
HEAVY = {"Tent": (2.0, 9.0), "Sleeping Bag": (1.0, 3.5), "Camp Stove": (1.5, 6.0), "Backpack": (1.0, 3.0),
         "Camp Chair": (2.0, 7.0), "Dumbbell Set": (8.0, 32.0), "Kettlebell": (4.0, 24.0), "Soundbar": (2.0, 6.0),
         "Turntable": (3.0, 9.0), "Floor Lamp": (3.0, 12.0), "Blender": (1.5, 5.0), "Planter": (1.0, 22.0)}


def build_catalog(con: duckdb.DuckDBPyConnection, rng: random.Random) -> None:
    con.execute("""
        CREATE TABLE suppliers (supplier_id INTEGER PRIMARY KEY, name VARCHAR, founded_year INTEGER,
            contact STRUCT(name VARCHAR, email VARCHAR, phone VARCHAR), ships_to VARCHAR[]);
        CREATE TABLE products (product_id INTEGER PRIMARY KEY, sku VARCHAR, name VARCHAR, brand VARCHAR,
            category VARCHAR, supplier_id INTEGER, price DECIMAL(8, 2), tags VARCHAR[],
            dims STRUCT(width_cm DOUBLE, height_cm DOUBLE, depth_cm DOUBLE, weight_kg DOUBLE),
            attributes MAP(VARCHAR, VARCHAR), review_stars INTEGER[], launched_on DATE);
        CREATE TABLE bundles (bundle_id INTEGER PRIMARY KEY, bundle_name VARCHAR, product_ids INTEGER[],
            discount_pct INTEGER);
        COMMENT ON TABLE products IS 'Product catalogue of the web shop';
        COMMENT ON COLUMN products.tags IS 'Merchandising tags, most relevant first';
        COMMENT ON COLUMN products.dims IS 'Package dimensions in centimetres and weight in kilograms';
        COMMENT ON COLUMN products.attributes IS
            'Free-form attributes such as color, material, warranty_years, voltage';
        COMMENT ON COLUMN products.review_stars IS 'Star rating (1-5) of every customer review, oldest first';
        COMMENT ON COLUMN bundles.product_ids IS 'products.product_id of every product in the bundle';
    """)
    suppliers = []
    for sid, name in enumerate(SUPPLIER_NAMES, start=1):
        person = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        domain = name.lower().replace(" co", "").replace(" gmbh", "").replace(" ltd", "").replace(" ", "") + ".com"
        email = f"{person.split()[0].lower()}@{domain}"
        ships = sorted(rng.sample(COUNTRY_CODES[:12], rng.randint(2, 7)))
        if sid % 4 == 2:
            ships.append(COUNTRY_CODES[12 + sid % 3])                      # a few ship overseas: US, CA or JP
        phone = f"+{rng.randint(30, 49)} {rng.randrange(10**8, 10**9)}"
        suppliers.append((sid, name, rng.randint(1962, 2019), {"name": person, "email": email, "phone": phone},
                          sorted(set(ships))))
    insert(con, "suppliers", suppliers)

    products, adjectives = [], ["Classic", "Pro", "Mini", "Max", "Eco", "Smart", "Urban", "Trek", "Lite", "Prime"]
    seen: set[str] = set()
    for pid in range(1, 481):
        cat = list(CATEGORIES)[(pid - 1) % 6] if pid <= 300 else rng.choice(list(CATEGORIES))
        brands, nouns, (lo, hi), favoured = CATEGORIES[cat]
        brand = rng.choice(brands)
        seen.add(name)
        pool = favoured * 2 + GENERAL_TAGS
        tags = list(dict.fromkeys(rng.choice(pool) for _ in range(rng.randint(1, 5))))
        if cat == "lighting" and "clearance" not in tags and rng.random() < 0.1:
            tags.append("clearance")
        noun = rng.choice(nouns)
        name = f"{brand} {rng.choice(adjectives)} {noun}"
        while name in seen:
            name = f"{brand} {rng.choice(adjectives)} {noun} {rng.choice(['II', 'XL', 'S', 'Plus', 'Duo'])}"
        w, h, d = (round(rng.uniform(5, 80), 1) for _ in range(3))
        weight = round(rng.uniform(*HEAVY.get(noun, (0.1, 3.0))), 2)
        attrs = {"color": weighted(rng, COLORS)} if rng.random() < 0.85 else {}
        if rng.random() < 0.55:
            attrs["material"] = weighted(rng, MATERIALS)
        if rng.random() < 0.6:
            attrs["warranty_years"] = str(weighted(rng, [(1, 30), (2, 45), (3, 15), (5, 10)]))
        if cat in ("lighting", "audio") and rng.random() < 0.7:
            attrs["voltage"] = rng.choice(["5V", "12V", "230V"])
        keys = list(attrs)
        rng.shuffle(keys)
        q = BRAND_QUALITY[brand]
        stars = [min(5, max(1, round(rng.gauss(q, 0.9)))) for _ in range(rng.choice([0, rng.randint(1, 12),
                                                                                    rng.randint(5, 45)]))]
        products.append((pid, f"{cat[:3].upper()}-{1000 + pid}", name, brand, cat,
                         rng.randint(1, len(SUPPLIER_NAMES)), round(rng.uniform(lo, hi), 2), tags,
                         {"width_cm": w, "height_cm": h, "depth_cm": d, "weight_kg": weight},
                         keys, [attrs[k] for k in keys], stars,
                         dt.date(2019, 1, 1) + dt.timedelta(days=rng.randrange(2000))))
    insert(con, "products", products, ", ".join([*(f"unnest(${i})" for i in range(1, 10)),
                                                  "map(unnest($10), unnest($11))", "unnest($12)", "unnest($13)"]))
    bundles, names = [], [f"{t} {k}" for t in BUNDLE_THEMES for k in BUNDLE_KINDS]
    rng.shuffle(names)
    by_cat = {c: [p[0] for p in products if p[4] == c] for c in CATEGORIES}
    for bid, bname in enumerate(names, start=1):
        pool = by_cat.get(THEME_CATEGORY.get(bname.rsplit(" ", 1)[0], ""), range(1, 481))
        bundles.append((bid, bname, sorted(rng.sample(list(pool), rng.randint(2, 5))), rng.choice([5, 10, 15, 20])))
    insert(con, "bundles", bundles)


# ------------------------------------------------------------------------------------------ trips
BOROUGHS = {"Central": ["Old Town", "Market Square", "Cathedral Quarter", "Museum Mile", "Riverside",
                        "Financial District", "Opera"],
            "North": ["Northgate", "Hillcrest", "University", "Botanic Garden", "Pinewood", "Stadium"],
            "East": ["Eastport", "Harbor Point", "Docklands", "Ferry Terminal", "Warehouse Row", "Lighthouse"],
            "South": ["Southbank", "Meadowvale", "Old Mill", "Rail Yards", "Brookside"],
            "West": ["Westfield", "Airport", "Lakeside", "Orchard Park", "Tech Park", "Sunset Hills"]}
ZONE_WEIGHT = {"Airport": 9, "Old Town": 8, "Financial District": 7, "Market Square": 6, "Riverside": 5,
               "University": 5, "Ferry Terminal": 4, "Stadium": 4, "Tech Park": 4}


def build_trips(con: duckdb.DuckDBPyConnection, rng: random.Random) -> None:
    con.execute("""
        CREATE TABLE zones (zone_id INTEGER PRIMARY KEY, zone_name VARCHAR, borough VARCHAR);
        CREATE TABLE drivers (driver_id INTEGER PRIMARY KEY, full_name VARCHAR, birth_date DATE,
                              licensed_since DATE, vehicle_type VARCHAR);
        CREATE TABLE trips (trip_id INTEGER PRIMARY KEY, driver_id INTEGER, pickup_at TIMESTAMP,
                            dropoff_at TIMESTAMP, pickup_zone_id INTEGER, dropoff_zone_id INTEGER,
                            passenger_count INTEGER, distance_km DOUBLE, fare_amount DECIMAL(8, 2),
                            tip_amount DECIMAL(8, 2), payment_type VARCHAR);
        COMMENT ON TABLE trips IS 'Taxi trips, January-June 2024; times are local and recorded to the minute';
        COMMENT ON COLUMN trips.fare_amount IS 'Metered fare in EUR, without tip';
        COMMENT ON COLUMN trips.payment_type IS 'card, cash or app';
    """)
    zones = [(i, z, b) for i, (z, b) in enumerate(((z, b) for b, zs in BOROUGHS.items() for z in zs), start=1)]
    insert(con, "zones", zones)
    zone_w = [ZONE_WEIGHT.get(z, 2) for _, z, _ in zones]

    drivers, names = [], set()
    for did in range(1, 91):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        while name in names:
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        names.add(name)
        born = dt.date(1956, 1, 1) + dt.timedelta(days=rng.randrange(365 * 44))
        licensed = min(dt.date(2023, 12, 1), born + dt.timedelta(days=rng.randrange(365 * 18 + 30, 365 * 45)))
        drivers.append((did, name, born, licensed,
                        weighted(rng, [("sedan", 45), ("suv", 20), ("van", 10), ("electric", 25)])))
    insert(con, "drivers", drivers)
    driver_w = [rng.choice([1, 2, 3, 5, 8]) for _ in drivers]

    start = dt.datetime(2024, 1, 1)
    hours = [3, 2, 2, 1, 1, 2, 5, 9, 12, 9, 7, 7, 8, 7, 7, 8, 10, 13, 12, 10, 9, 8, 7, 5]
    days = [d for d in range(182)] + [rng.randrange(182) for _ in range(4000 - 182)]   # every day has trips
    trips = []
    for tid, day in enumerate(sorted(days), start=1):
        hour = rng.choices(range(24), weights=hours)[0]
        pickup = start + dt.timedelta(days=day, hours=hour, minutes=rng.randrange(60))
        pz, dz = rng.choices(zones, weights=zone_w, k=2)
        km = round(min(45.0, rng.lognormvariate(1.4, 0.6) + (14 if "Airport" in (pz[1], dz[1]) else 0)), 2)
        rush = 1.5 if hour in (7, 8, 17, 18) else 1.0
        minutes = max(3, round(km * rng.uniform(1.6, 2.6) * rush + rng.randint(0, 6)))
        fare = round(3.2 + 1.9 * km + 0.35 * minutes, 2)
        pay = weighted(rng, [("card", 64), ("cash", 26), ("app", 10)])
        tip = 0.0 if pay == "cash" and rng.random() < 0.8 else round(fare * rng.choice([0, 0.05, 0.1, 0.15, 0.2]), 2)
        trips.append((tid, rng.choices(drivers, weights=driver_w)[0][0], pickup, pickup + dt.timedelta(minutes=minutes),
                      pz[0], dz[0], weighted(rng, [(1, 62), (2, 22), (3, 9), (4, 7)]), km, fare, tip, pay))
    insert(con, "trips", trips)


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


# ------------------------------------------------------------------------------------------ main
BUILDERS: dict[str, tuple[Callable[[duckdb.DuckDBPyConnection, random.Random], None], int]] = {
    "events": (build_events, 101), "catalog": (build_catalog, 202), "trips": (build_trips, 303),
    "survey": (build_survey, 404), "sales_star": (build_sales_star, 505), "logs": (build_logs, 606)}


def build(out: str | Path = DEFAULT_OUT, *, replace: bool = False) -> list[Path]:
    """Write every database into ``out``; returns their paths. Refuses to overwrite unless ``replace``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.duckdb" for name in BUILDERS]
    existing = [p for p in paths if p.exists()]
    if existing and not replace:
        raise FileExistsError(f"{existing[0]} exists; pass --replace to rebuild")
    for (builder, seed), path in zip(BUILDERS.values(), paths):
        for leftover in (path, Path(f"{path}.wal")):
            leftover.unlink(missing_ok=True)
        con = duckdb.connect(str(path))
        try:
            builder(con, random.Random(seed))
            con.execute("CHECKPOINT")
        finally:
            con.close()
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Build the DuckDB-idioms benchmark databases.")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"folder for the .duckdb files (default {DEFAULT_OUT})")
    ap.add_argument("--replace", action="store_true", help="overwrite existing files")
    args = ap.parse_args(argv)
    try:
        paths = build(args.out, replace=args.replace)
    except FileExistsError as e:
        print(e, file=sys.stderr)
        return 1
    for p in paths:
        con = duckdb.connect(str(p), read_only=True)
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_name").fetchall()]
        counts = ", ".join(f"{t} {con.execute(f'SELECT count(*) FROM {t}').fetchone()[0]}" for t in tables)
        con.close()
        print(f"{p}: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
