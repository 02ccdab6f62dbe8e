"""What bench/dialect_db.py's database holds: its schema, comments and the vocabularies its rows are drawn from."""
from __future__ import annotations

import datetime as dt

START = dt.datetime(2023, 1, 1)
END = dt.datetime(2026, 1, 1)          # exclusive: data covers 2023-01-01 .. 2025-12-31

FIRST_NAMES = ["Anna", "Ben", "Carla", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Keiko",
               "Liam", "Maya", "Nils", "Olivia", "Pablo", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera",
               "Walter", "Ximena", "Yusuf", "Zoe", "Marco", "Lena", "Theo", "Priya"]
LAST_NAMES = ["Schmidt", "Garcia", "Nguyen", "Martin", "Rossi", "Kowalski", "Dubois", "Smith", "Tanaka",
              "Okafor", "Silva", "Novak", "Jensen", "Fischer", "Moreau", "Brown", "Costa", "Haddad", "Larsen",
              "Weber", "Lopez", "Murphy", "Ivanova", "Patel", "Keller"]
EMAIL_DOMAINS = [("gmail.com", 30), ("outlook.com", 18), ("yahoo.com", 12), ("proton.me", 8), ("web.de", 7),
                 ("icloud.com", 10), ("orange.fr", 5), ("example.org", 4)]
# country -> (weight, [(city, zip maker)])
COUNTRIES = {
    "United States": (34, ["Seattle", "Austin", "Boston", "Denver", "San Diego"]),
    "Germany": (22, ["Berlin", "Munich", "Hamburg", "Cologne"]),
    "France": (16, ["Paris", "Lyon", "Marseille"]),
    "United Kingdom": (15, ["London", "Manchester", "Leeds"]),
    "Canada": (13, ["Toronto", "Vancouver", "Montreal"]),
}
US_ZIP_PREFIX = {"Seattle": "981", "Austin": "787", "Boston": "021", "Denver": "802", "San Diego": "921"}
STREETS = ["Main Street", "Oak Avenue", "Lindenstrasse", "Rue de la Paix", "High Street", "Maple Road",
           "Harbour Way", "Park Lane", "Bahnhofstrasse", "Rue Victor Hugo", "King Street", "Elm Drive"]
TIERS = [("bronze", 55), ("silver", 30), ("gold", 15)]

CATEGORIES = {
    "kitchen": (["Bamboo", "Cast Iron", "Ceramic", "Copper", "Stainless Steel", "Glass"],
                ["Cutting Board", "Skillet", "Mug", "Kettle", "Mixing Bowl", "Spice Jar"], (6, 90)),
    "outdoor": (["Trail", "Waterproof", "Folding", "Ultralight", "Insulated", "Solar"],
                ["Backpack", "Tent", "Camp Chair", "Water Bottle", "Lantern", "Hammock"], (12, 260)),
    "office": (["Ergonomic", "Recycled", "Leather", "Magnetic", "Wireless", "Steel"],
               ["Notebook", "Desk Lamp", "Pen Set", "Monitor Stand", "Keyboard", "Organizer"], (4, 150)),
    "garden": (["Organic", "Heavy Duty", "Self-Watering", "Raised", "Stainless Steel", "Compact"],
               ["Planter", "Hose", "Trowel", "Seed Mix", "Compost Bin", "Pruning Shears"], (5, 120)),
    "pet": (["Orthopedic", "Grain-Free", "Reflective", "Chew-Proof", "Cozy", "Automatic"],
            ["Dog Bed", "Cat Food", "Leash", "Chew Toy", "Feeder", "Litter Box"], (4, 110)),
    "beauty": (["Vegan", "Herbal", "Hydrating", "Charcoal", "Rose", "Unscented"],
               ["Face Cream", "Shampoo", "Soap Bar", "Lip Balm", "Body Oil", "Face Mask"], (3, 60)),
}
PACKAGE_SIZES = {"kitchen": ["1 pc", "1 pc", "2 pcs", "4 pcs", "6 pcs", "500 ml", "1 L"],
                 "outdoor": ["1 pc", "1 pc", "2 pcs", "500 ml", "750 ml", "1 L"],
                 "office": ["1 pc", "1 pc", "3 pcs", "5 pcs", "10 pcs"],
                 "garden": ["1 pc", "3 pcs", "1 kg", "2.5 kg", "5 kg", "20 L", "40 L"],
                 "pet": ["1 pc", "2 pcs", "500 g", "2 kg", "5 kg", "10 kg"],
                 "beauty": ["50 ml", "100 ml", "250 ml", "500 ml", "100 g", "250 g"]}
PRODUCT_TAGS = ["eco", "bestseller", "new", "gift", "clearance", "premium", "handmade"]

ORDER_STATUSES_OLD = [("delivered", 82), ("cancelled", 9), ("returned", 9)]
SEASONS = {12: "WINTER", 1: "WINTER", 2: "WINTER", 3: "SPRING", 4: "SPRING", 5: "SPRING", 6: "SUMMER",
           7: "SUMMER", 8: "SUMMER", 9: "AUTUMN", 10: "AUTUMN", 11: "AUTUMN"}

DEVICES = {"ios": (24, ["safari", "chrome"]), "android": (26, ["chrome", "samsung"]),
           "windows": (28, ["chrome", "edge", "firefox"]), "macos": (15, ["safari", "chrome", "firefox"]),
           "linux": (7, ["firefox", "chrome"])}
EVENT_TYPES = [("page_view", 55), ("search", 17), ("add_to_cart", 18), ("purchase", 10)]
UTM_SOURCES = [("newsletter", 30), ("google", 40), ("instagram", 22), ("partner_blog", 8)]
UTM_MEDIUM = {"newsletter": "email", "google": "cpc", "instagram": "social", "partner_blog": "referral"}
SEARCH_TERMS = [("water bottle", 14), ("dog bed", 11), ("gift set", 9), ("tent", 8), ("face cream", 7),
                ("desk lamp", 6), ("compost", 5), ("kettle", 5), ("hammock", 4), ("vegan soap", 4),
                ("notebook", 3), ("leash", 3)]

AGENTS = ["maria.lopez", "tom.becker", "aiko.sato", "james.oconnor", "nadia.haddad", "lukas.brandt"]
TICKET_PRIORITIES = [("low", 30), ("normal", 45), ("high", 18), ("urgent", 7)]
TICKET_CHANNELS = [("email", 45), ("chat", 38), ("phone", 17)]
ORDER_SUBJECTS = ["Order #{o}: item arrived damaged", "Where is my order {o}?", "Refund request for order #{o}",
                  "Wrong item in order #{o}", "order {o} - missing item", "REFUND not received for order {o}",
                  "Change delivery address for order #{o}"]
OTHER_SUBJECTS = ["Cannot log in to my account", "Question about {sku}", "Is {sku} back in stock?",
                  "Unsubscribe from newsletter", "Invoice copy needed", "Password reset email not arriving",
                  "Refund policy question"]

SCHEMA = """
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    full_name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    signup_date DATE NOT NULL,
    loyalty_tier VARCHAR NOT NULL,
    address STRUCT(street VARCHAR, city VARCHAR, zip VARCHAR, country VARCHAR),
    marketing_opt_in BOOLEAN NOT NULL
);
CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    sku VARCHAR NOT NULL,
    product_name VARCHAR NOT NULL,
    category VARCHAR NOT NULL,
    unit_price DECIMAL(10, 2) NOT NULL,
    package_size VARCHAR NOT NULL,
    tags VARCHAR[] NOT NULL,
    launched_on DATE NOT NULL
);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(customer_id),
    ordered_at TIMESTAMP NOT NULL,
    status VARCHAR NOT NULL,
    item_ids INTEGER[] NOT NULL,
    coupon_code VARCHAR,
    shipping_fee DECIMAL(10, 2) NOT NULL,
    total_amount DECIMAL(10, 2) NOT NULL,
    delivered_on DATE
);
CREATE TABLE web_events (
    event_id INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customers(customer_id),
    event_time TIMESTAMP NOT NULL,
    event_type VARCHAR NOT NULL,
    page_url VARCHAR NOT NULL,
    payload JSON NOT NULL
);
CREATE TABLE support_tickets (
    ticket_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(customer_id),
    order_id INTEGER REFERENCES orders(order_id),
    opened_at TIMESTAMP NOT NULL,
    closed_at TIMESTAMP,
    status VARCHAR NOT NULL,
    priority VARCHAR NOT NULL,
    channel VARCHAR NOT NULL,
    subject VARCHAR NOT NULL,
    agent_email VARCHAR NOT NULL,
    satisfaction_score INTEGER
);
"""

# Column comments are kept short: duckask's schema prompt shows the first 48 characters.
COMMENTS = {
    "customers": ("Registered shop customers, one row per customer", {
        "customer_id": "Unique customer number",
        "full_name": "First and last name, e.g. 'Anna Schmidt'",
        "email": "Email address as typed at signup (mixed case)",
        "signup_date": "Date the customer created their account",
        "loyalty_tier": "Loyalty level: bronze, silver or gold",
        "address": "Postal address; country is the full name",
        "marketing_opt_in": "True if the customer accepts marketing emails",
    }),
    "products": ("Product catalogue, one row per product", {
        "product_id": "Unique product number",
        "sku": "Stock keeping unit code, e.g. 'SKU-00123'",
        "product_name": "Product name shown in the shop",
        "category": "kitchen, outdoor, office, garden, pet, beauty",
        "unit_price": "Price of one unit in euros",
        "package_size": "Pack size text, e.g. '500 g', '1 L', '4 pcs'",
        "tags": "Merchandising labels, e.g. ['eco', 'gift']",
        "launched_on": "Date the product went on sale",
    }),
    "orders": ("Customer orders placed in the shop, 2023-2025", {
        "order_id": "Unique order number",
        "customer_id": "Customer who placed the order",
        "ordered_at": "Date and time the order was placed",
        "status": "Order state, e.g. delivered, cancelled, returned",
        "item_ids": "product_id of each item (one unit each)",
        "coupon_code": "Coupon used; ends in the percent off, e.g. -15",
        "shipping_fee": "Shipping charged in euros (0 over 50 euros)",
        "total_amount": "Paid in euros after coupon, incl. shipping",
        "delivered_on": "Delivery date; NULL if not delivered yet",
    }),
    "web_events": ("Clickstream events from the shop website", {
        "event_id": "Unique event number",
        "customer_id": "Logged-in customer; NULL for anonymous visitors",
        "event_time": "Date and time of the event",
        "event_type": "page_view, search, add_to_cart or purchase",
        "page_url": "Full page address, may carry utm_source=...",
        "payload": "Event details: device.os/browser, items, price",
    }),
    "support_tickets": ("Customer support tickets", {
        "ticket_id": "Unique ticket number",
        "customer_id": "Customer who opened the ticket",
        "order_id": "Order the ticket is about, if any",
        "opened_at": "Date and time the ticket was opened",
        "closed_at": "Date and time it was closed; NULL while open",
        "status": "open or closed",
        "priority": "low, normal, high or urgent",
        "channel": "Contact channel: email, chat or phone",
        "subject": "Subject line written by the customer",
        "agent_email": "Email of the support agent handling it",
        "satisfaction_score": "Rating after close: 1 (bad) to 5 (great)",
    }),
}
