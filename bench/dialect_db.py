"""Build the DuckDB-dialect benchmark database: a small online shop that uses DuckDB's own types.

Five tables, generated deterministically (``random.Random(7)``, no clock, no network), so every build
holds the same rows and bench/dialect_questions.yaml's gold answers never change:

- ``customers`` (300): ``address STRUCT(street, city, zip, country)``, mixed-case emails, signup DATE;
- ``products`` (150): ``sku`` like 'SKU-00123', ``tags VARCHAR[]``, a ``package_size`` text ('500 g');
- ``orders`` (600): ``ordered_at TIMESTAMP`` over 2023-2025, ``delivered_on DATE``,
  ``item_ids INTEGER[]`` (product ids), coupon codes like 'SUMMER24-15';
- ``web_events`` (900): ``payload JSON`` ({"device": {"os", "browser"}, "items": [{"sku", "qty"}],
  "price", "query", ...}) and page URLs with utm_source parameters;
- ``support_tickets`` (300): opened/closed TIMESTAMPs, free-text subjects that mention order numbers.

Every table and column carries a COMMENT, as a documented warehouse would. Only duckdb and the
standard library are used.

    .venv/bin/python bench/dialect_db.py                 # writes /tmp/duckask_dialect.duckdb
    .venv/bin/python bench/dialect_db.py --out PATH --replace
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))   # dialect_db_spec.py beside this file

DEFAULT_OUT = "/tmp/duckask_dialect.duckdb"
SEED = 7

from dialect_db_spec import (  # noqa: E402
    AGENTS,
    CATEGORIES,
    COMMENTS,
    COUNTRIES,
    DEVICES,
    EMAIL_DOMAINS,
    END,
    EVENT_TYPES,
    FIRST_NAMES,
    LAST_NAMES,
    ORDER_STATUSES_OLD,
    ORDER_SUBJECTS,
    OTHER_SUBJECTS,
    PACKAGE_SIZES,
    PRODUCT_TAGS,
    SCHEMA,
    SEARCH_TERMS,
    SEASONS,
    START,
    STREETS,
    TICKET_CHANNELS,
    TICKET_PRIORITIES,
    TIERS,
    US_ZIP_PREFIX,
    UTM_MEDIUM,
    UTM_SOURCES,
)


def _weighted(rng: random.Random, pairs: list[tuple[str, int]]) -> str:
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def _money(x: float | Decimal) -> Decimal:
    return Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _moment(rng: random.Random, start: dt.datetime, end: dt.datetime, growth: float = 1.0) -> dt.datetime:
    """A random second in [start, end); growth > 1 puts more weight on later moments."""
    span = int((end - start).total_seconds())
    return start + dt.timedelta(seconds=int(span * rng.random() ** (1 / growth)))


def _zip(rng: random.Random, country: str, city: str) -> str:
    if country == "United States":
        return US_ZIP_PREFIX[city] + f"{rng.randint(0, 99):02d}"
    if country == "Canada":
        letters = "ABCEGHJKLMNPRSTVXY"
        first = {"Toronto": "M", "Vancouver": "V", "Montreal": "H"}[city]
        fsa = f"{first}{rng.randint(1, 9)}{rng.choice(letters)}"
        return f"{fsa} {rng.randint(1, 9)}{rng.choice(letters)}{rng.randint(1, 9)}"
    if country == "United Kingdom":
        area = {"London": "SW", "Manchester": "M", "Leeds": "LS"}[city]
        letters = "ABDEFGHJLNPQRSTUWXYZ"
        return f"{area}{rng.randint(1, 20)} {rng.randint(1, 9)}{rng.choice(letters)}{rng.choice(letters)}"
    prefix = {"Berlin": "10", "Munich": "80", "Hamburg": "20", "Cologne": "50", "Paris": "75", "Lyon": "69",
              "Marseille": "13"}[city]
    return prefix + f"{rng.randint(0, 999):03d}"


def make_customers(rng: random.Random, n: int = 300) -> list[tuple]:
    rows, emails = [], set()
    countries = list(COUNTRIES)
    for cid in range(1, n + 1):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        domain = _weighted(rng, EMAIL_DOMAINS)
        local = rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}{rng.randint(1, 99)}",
                            f"{last}.{first}"])
        email = f"{local}@{domain}"
        while email.lower() in emails:
            email = f"{local}{rng.randint(2, 9)}@{domain}"
        emails.add(email.lower())
        style = rng.random()
        if style < 0.6:
            email = email.lower()
        elif style < 0.7:
            email = email.upper()
        elif style < 0.8:
            email = email.split("@")[0] + "@" + domain.capitalize()
        signup = (dt.date(2022, 6, 1) + dt.timedelta(days=rng.randint(0, (dt.date(2025, 9, 30)
                                                                              - dt.date(2022, 6, 1)).days)))
        country = rng.choices(countries, weights=[COUNTRIES[c][0] for c in countries])[0]
        city = rng.choice(COUNTRIES[country][1])
        street = f"{rng.randint(1, 240)} {rng.choice(STREETS)}"
        rows.append((cid, f"{first} {last}", email, signup, _weighted(rng, TIERS),
                     street, city, _zip(rng, country, city), country, rng.random() < 0.55))
    return rows


def make_products(rng: random.Random) -> list[tuple]:
    rows = []
    sku_numbers = rng.sample(range(100, 100000), 150)
    pid = 0
    for category, (adjectives, nouns, (lo, hi)) in CATEGORIES.items():
        combos = [(a, b) for a in adjectives for b in nouns]
        for adjective, noun in rng.sample(combos, 25):
            pid += 1
            price = _money(int(rng.uniform(lo, hi)) + rng.choice([0.25, 0.49, 0.79, 0.95, 0.99]))
            k = rng.choices([0, 1, 2, 3], weights=[25, 40, 25, 10])[0]
            tags = sorted(rng.sample(PRODUCT_TAGS, k))
            launched = dt.date(2022, 1, 1) + dt.timedelta(days=rng.randint(0, 1370))
            rows.append((pid, f"SKU-{sku_numbers[pid - 1]:05d}", f"{adjective} {noun}", category, price,
                         rng.choice(PACKAGE_SIZES[category]), tags, launched))
    return rows


def make_orders(rng: random.Random, customers: list[tuple], products: list[tuple], n: int = 600) -> list[tuple]:
    popularity = {p[0]: w for p, w in zip(products, rng.sample([1 / (i + 1) ** 0.7 for i in range(len(products))],
                                                                len(products)))}
    times = sorted(_moment(rng, START, END, growth=1.4) for _ in range(n))
    ordered_before: set[int] = set()
    rows = []
    for i, ts in enumerate(times):
        oid = 10001 + i
        eligible = [c for c in customers if c[3] <= ts.date()]
        cust = rng.choice(eligible)
        avail = [p for p in products if p[7] <= ts.date()]
        k = min(len(avail), rng.choices([1, 2, 3, 4, 5], weights=[30, 30, 20, 12, 8])[0])
        items: list[int] = []
        while len(items) < k:
            pick = rng.choices(avail, weights=[popularity[p[0]] for p in avail])[0][0]
            if pick not in items:
                items.append(pick)
        price = {p[0]: p[4] for p in products}
        subtotal = sum(price[x] for x in items)
        coupon, pct = None, 0
        if cust[0] not in ordered_before and rng.random() < 0.3:
            coupon, pct = "WELCOME-10", 10
        elif rng.random() < 0.22:
            pct = rng.choice([5, 10, 15, 20, 25])
            coupon = f"{SEASONS[ts.month]}{ts.year % 100:02d}-{pct}"
        ordered_before.add(cust[0])
        shipping = _money(0 if subtotal >= 50 else 4.99)
        total = _money(subtotal * (Decimal(100 - pct) / 100) + shipping)
        age_days = (END - ts).days
        if age_days <= 3:
            status = "processing"
        elif age_days <= 10 and rng.random() < 0.6:
            status = "shipped"
        else:
            status = _weighted(rng, ORDER_STATUSES_OLD)
        delivered = None
        if status in ("delivered", "returned"):
            delivered = ts.date() + dt.timedelta(days=rng.choices(range(1, 13), weights=[4, 10, 14, 14, 12, 9, 7,
                                                                                           5, 3, 2, 2, 1])[0])
            if delivered >= END.date():
                status, delivered = "shipped", None
        rows.append((oid, cust[0], ts, status, items, coupon, shipping, total, delivered))
    return rows


def make_events(rng: random.Random, customers: list[tuple], products: list[tuple], n: int = 900) -> list[tuple]:
    oses = [(k, v[0]) for k, v in DEVICES.items()]
    popularity = [1 / (i + 1) ** 0.8 for i in range(len(products))]
    by_popularity = rng.sample(products, len(products))
    times = sorted(_moment(rng, START, END, growth=1.2) for _ in range(n))
    rows = []
    for i, ts in enumerate(times):
        etype = _weighted(rng, EVENT_TYPES)
        os_name = _weighted(rng, oses)
        payload: dict = {"device": {"os": os_name, "browser": rng.choice(DEVICES[os_name][1]),
                                    "mobile": os_name in ("ios", "android")},
                         "session_id": f"s-{rng.randint(0, 16 ** 8 - 1):08x}"}
        signed_up = [c for c in customers if c[3] <= ts.date()]
        customer = None if rng.random() < 0.25 else rng.choice(signed_up)[0]
        if etype == "page_view":
            if rng.random() < 0.7:
                p = rng.choices(by_popularity, weights=popularity)[0]
                path = f"/products/{p[1].lower()}"
                payload["sku"] = p[1]
            else:
                path = f"/category/{rng.choice(list(CATEGORIES))}"
            payload["duration_ms"] = rng.randint(800, 90000)
        elif etype == "search":
            term = _weighted(rng, SEARCH_TERMS)
            path = "/search?q=" + term.replace(" ", "+")
            payload["query"] = term
            payload["results"] = rng.randint(0, 40)
        else:
            k = 1 if etype == "add_to_cart" else rng.choices([1, 2, 3, 4], weights=[40, 30, 20, 10])[0]
            picks: list[tuple] = []
            while len(picks) < k:
                p = rng.choices(by_popularity, weights=popularity)[0]
                if p not in picks:
                    picks.append(p)
            items = [{"sku": p[1], "qty": rng.choices([1, 2, 3], weights=[70, 22, 8])[0]} for p in picks]
            payload["items"] = items
            payload["price"] = float(sum(p[4] * it["qty"] for p, it in zip(picks, items)))
            payload["currency"] = "EUR"
            path = "/cart" if etype == "add_to_cart" else "/checkout/complete"
        url = "https://shop.example.com" + path
        if rng.random() < 0.3:
            src = _weighted(rng, UTM_SOURCES)
            url += ("&" if "?" in url else "?") + f"utm_source={src}&utm_medium={UTM_MEDIUM[src]}"
        rows.append((i + 1, customer, ts, etype, url, json.dumps(payload)))
    return rows


def make_tickets(rng: random.Random, customers: list[tuple], products: list[tuple], orders: list[tuple],
                 n: int = 300) -> list[tuple]:
    rows = []
    for tid in range(1, n + 1):
        if rng.random() < 0.7:
            order = rng.choice(orders)
            cust, oid = order[1], order[0]
            opened = order[2] + dt.timedelta(minutes=rng.randint(60, 60 * 24 * 20))
            subject = rng.choice(ORDER_SUBJECTS).format(o=oid)
        else:
            opened = _moment(rng, START, END)
            cust, oid = rng.choice([c for c in customers if c[3] <= opened.date()])[0], None
            subject = rng.choice(OTHER_SUBJECTS).format(sku=rng.choice(products)[1])
        if opened >= END:
            opened = END - dt.timedelta(hours=rng.randint(2, 200))
        priority = _weighted(rng, TICKET_PRIORITIES)
        closed = None
        if rng.random() < 0.88:
            scale = {"urgent": 6, "high": 20, "normal": 40, "low": 70}[priority]
            closed = opened + dt.timedelta(minutes=int(rng.expovariate(1 / scale) * 60) + 15)
            if closed >= END:
                closed = None
        status = "open" if closed is None else "closed"
        score = rng.choices([1, 2, 3, 4, 5], weights=[8, 10, 20, 35, 27])[0] if closed and rng.random() < 0.7 \
            else None
        rows.append((tid, cust, oid, opened, closed, status, priority, _weighted(rng, TICKET_CHANNELS), subject,
                     rng.choice(AGENTS) + "@support.example.com", score))
    return rows


def build(out: Path) -> dict[str, int]:
    rng = random.Random(SEED)
    customers = make_customers(rng)
    products = make_products(rng)
    orders = make_orders(rng, [(c[0], None, None, c[3]) for c in customers], products)
    events = make_events(rng, [(c[0], None, None, c[3]) for c in customers], products)
    tickets = make_tickets(rng, [(c[0], None, None, c[3]) for c in customers], products, orders)

    con = duckdb.connect(str(out))
    try:
        con.execute("BEGIN")
        con.execute(SCHEMA)
        con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, "
                        "{'street': ?, 'city': ?, 'zip': ?, 'country': ?}, ?)", customers)
        con.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?, ?)", products)
        con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", orders)
        con.executemany("INSERT INTO web_events VALUES (?, ?, ?, ?, ?, ?)", events)
        con.executemany("INSERT INTO support_tickets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", tickets)
        for table, (about, columns) in COMMENTS.items():
            con.execute(f"COMMENT ON TABLE {table} IS '{about.replace(chr(39), chr(39) * 2)}'")
            for column, text in columns.items():
                con.execute(f"COMMENT ON COLUMN {table}.{column} IS '{text.replace(chr(39), chr(39) * 2)}'")
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COMMENTS}
    finally:
        con.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Build the DuckDB-dialect benchmark database (deterministic).")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"database file to write (default {DEFAULT_OUT})")
    ap.add_argument("--replace", action="store_true", help="overwrite the file if it exists")
    args = ap.parse_args(argv)
    out = Path(args.out).expanduser()
    wal = out.with_name(out.name + ".wal")
    if out.exists() and not args.replace:
        sys.exit(f"{out} already exists; pass --replace to overwrite it (or --out to write elsewhere)")
    out.parent.mkdir(parents=True, exist_ok=True)
    for f in (out, wal):
        f.unlink(missing_ok=True)
    counts = build(out)
    print(f"wrote {out}: " + ", ".join(f"{t} {n}" for t, n in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
