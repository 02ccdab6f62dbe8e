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

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the generators beside this file

DEFAULT_OUT = "/tmp/duckask_idioms"

from idioms_dbs_base import FIRST, LAST, QUERIES, insert, moment, weighted  # noqa: E402
from idioms_dbs_more import build_logs, build_sales_star, build_survey  # noqa: E402

# ------------------------------------------------------------------------------------------ events
OS = [("android", 46), ("ios", 38), ("web", 16)]
APP_VERSIONS = {"android": [("5.2.0", 20), ("5.3.1", 45), ("5.4.0", 35)],
                "ios": [("5.2.1", 15), ("5.3.1", 50), ("5.4.0", 35)],
                "web": [("2024.05", 40), ("2024.06", 60)]}
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
