"""Tests for duckask.utils.db.importer (folder of CSV/Parquet files, SQLite file)."""

from __future__ import annotations

import datetime as dt
import gzip
import sqlite3
from pathlib import Path

import duckdb
import pytest

from duckask.utils.app.import_command import main
from duckask.utils.db.importer import import_source, sanitize_identifier
from duckask.utils.db.sqlite_source import sqlite_type_to_duckdb


def _columns(db: Path, table: str) -> dict[str, tuple[str, str | None]]:
    """{column: (data_type, comment)} of a table."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT column_name, data_type, comment FROM duckdb_columns() "
            "WHERE table_name = ? ORDER BY column_index",
            [table],
        ).fetchall()
    return {name: (dtype, comment) for name, dtype, comment in rows}


def _primary_keys(db: Path) -> dict[str, list[str]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
            "WHERE constraint_type = 'PRIMARY KEY'"
        ).fetchall()
    return {t: list(cols) for t, cols in rows}


def _query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "Sales Data.csv").write_text(
        "order_id,customer,amount,order_date,paid\n"
        "1,Ann,10.5,2024-01-02,true\n"
        "2,Bob,3.25,2024-01-05,false\n"
        "3,O'Neil,7,2024-02-01,true\n"
    )
    with gzip.open(src / "2019-events.csv.gz", "wt") as fh:
        fh.write("id,kind\n1,click\n2,view\n")
    (src / "notes.tsv").write_text("n\ttext\n1\thello, world\n2\tbye\n")
    (src / "playerStats.csv").write_text("player,hr\nx,1\ny,2\nx,3\n")
    (src / "README.txt").write_text("not data")
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT range AS k, range * 1.5::DOUBLE AS v, 'r' || range AS label "
            f"FROM range(100)) TO '{src / 'metrics.parquet'}' (FORMAT parquet)"
        )
    return src


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE "Customer Info" (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            born DATE,
            score REAL,
            vip BOOLEAN,
            created DATETIME,
            price NUMERIC(10, 2)
        );
        CREATE TABLE orders (
            order_no INT,
            customer_id INTEGER REFERENCES "Customer Info"(id),
            qty INT,
            note,
            PRIMARY KEY (order_no)
        );
        CREATE TABLE tags (tag_code INT PRIMARY KEY, label TEXT);
        CREATE VIEW big_orders AS SELECT * FROM orders WHERE qty > 1;
        INSERT INTO "Customer Info" VALUES
            (1, 'Ann', '1990-05-01', 3.5, 1, '2024-01-01 10:00:00', '9.99'),
            (2, 'Bob', 'not a date', 'oops', 0, 'garbage', NULL);
        INSERT INTO orders VALUES (10, 1, 5, 'first'), (11, 2, 'many', NULL), (12, 1, 2, 7);
        INSERT INTO tags VALUES (1, 'a'), ('x', 'b');
        """
    )
    con.commit()
    con.close()
    return path


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Sales Data", "sales_data"),
        ("2019-events", "t_2019_events"),
        ("AllstarFull", "allstar_full"),
        ("playerStats", "player_stats"),
        ("already_snake", "already_snake"),
        ("  weird--name!! ", "weird_name"),
        ("---", "table"),
    ],
)
def test_sanitize_identifier(raw: str, expected: str) -> None:
    assert sanitize_identifier(raw) == expected


def test_sqlite_type_mapping() -> None:
    assert sqlite_type_to_duckdb("INTEGER") == "BIGINT"
    assert sqlite_type_to_duckdb("tinyint") == "BIGINT"
    assert sqlite_type_to_duckdb("REAL") == "DOUBLE"
    assert sqlite_type_to_duckdb("double precision") == "DOUBLE"
    assert sqlite_type_to_duckdb("DECIMAL(10,2)") == "DOUBLE"
    assert sqlite_type_to_duckdb("BOOLEAN") == "BOOLEAN"
    assert sqlite_type_to_duckdb("DATE") == "DATE"
    assert sqlite_type_to_duckdb("DATETIME") == "TIMESTAMP"
    assert sqlite_type_to_duckdb("timestamp") == "TIMESTAMP"
    assert sqlite_type_to_duckdb("VARCHAR(20)") == "VARCHAR"
    assert sqlite_type_to_duckdb("") == "VARCHAR"
    assert sqlite_type_to_duckdb(None) == "VARCHAR"


# --------------------------------------------------------------------------- folder


def test_folder_import(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.duckdb"
    messages: list[str] = []
    tables = import_source(folder, out, progress=messages.append)

    assert sorted(tables) == ["metrics", "notes", "player_stats", "sales_data", "t_2019_events"]
    assert tables.notes == []
    assert any("sales_data" in m and "3 rows" in m for m in messages)

    sales = _columns(out, "sales_data")
    assert {c: t for c, (t, _) in sales.items()} == {
        "order_id": "BIGINT",
        "customer": "VARCHAR",
        "amount": "DOUBLE",
        "order_date": "DATE",
        "paid": "BOOLEAN",
    }
    assert _query(out, "SELECT sum(amount), max(order_date) FROM sales_data") == [
        (20.75, dt.date(2024, 2, 1))
    ]
    assert _query(out, "SELECT customer FROM sales_data WHERE order_id = 3") == [("O'Neil",)]

    assert _query(out, "SELECT count(*), string_agg(kind, ',' ORDER BY id) FROM t_2019_events") == [
        (2, "click,view")
    ]
    assert _query(out, "SELECT text FROM notes WHERE n = 1") == [("hello, world",)]

    metrics = _columns(out, "metrics")
    assert metrics["k"][0] == "BIGINT"
    assert metrics["v"][0] == "DOUBLE"
    assert _query(out, "SELECT count(*), max(k), max(label) FROM metrics") == [(100, 99, "r99")]
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.duckdb", "src"]  # no temp file


def test_single_csv_file(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "one.duckdb"
    assert import_source(folder / "Sales Data.csv", out) == ["sales_data"]
    assert _query(out, "SELECT count(*) FROM sales_data") == [(3,)]


def test_comments_applied(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.duckdb"
    tables = import_source(
        folder,
        out,
        comments={
            "sales_data": {
                "__table__": "One row per order; Ann's shop",
                "amount": "Order total in euros",
                "nope": "no such column",
            },
            "Sales Data": {"customer": "Customer's name"},  # raw stem also matches
            "ghost": {"__table__": "no such table"},
        },
    )
    cols = _columns(out, "sales_data")
    assert cols["amount"][1] == "Order total in euros"
    assert cols["customer"][1] == "Customer's name"
    assert cols["order_id"][1] is None
    assert _query(out, "SELECT comment FROM duckdb_tables() WHERE table_name = 'sales_data'") == [
        ("One row per order; Ann's shop",)
    ]
    assert any("sales_data.nope" in n for n in tables.notes)
    assert any("ghost" in n for n in tables.notes)


def test_primary_keys_only_when_unique(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "pk.duckdb"
    tables = import_source(
        folder,
        out,
        primary_keys={"sales_data": ["order_id"], "player_stats": ["player"], "metrics": ["k", "label"]},
    )
    assert _primary_keys(out) == {"sales_data": ["order_id"], "metrics": ["k", "label"]}
    # the duplicate key was skipped silently (noted), the table still loaded
    assert _query(out, "SELECT count(*) FROM player_stats") == [(3,)]
    assert any(n.startswith("player_stats: primary key (player) skipped") for n in tables.notes)
    with duckdb.connect(str(out)) as con, pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO sales_data VALUES (1, 'dup', 1, DATE '2024-01-01', true)")


def test_column_types_override(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.duckdb"
    import_source(folder, out, column_types={"notes": {"text": "INTEGER", "n": "VARCHAR"}})
    cols = _columns(out, "notes")
    assert cols["n"][0] == "VARCHAR" and cols["text"][0] == "INTEGER"
    assert _query(out, "SELECT n, text FROM notes ORDER BY n") == [("1", None), ("2", None)]


def test_bad_csv_cells_become_null_with_column_types(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "scores.csv").write_text("name,score\na,10\nb,n/a\nc,7\n")
    out = tmp_path / "s.duckdb"
    import_source(src, out, column_types={"scores": {"score": "BIGINT"}})
    assert _query(out, "SELECT name, score FROM scores ORDER BY name") == [
        ("a", 10), ("b", None), ("c", 7)
    ]


# --------------------------------------------------------------------------- sqlite


def test_sqlite_import(sqlite_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "shop.duckdb"
    tables = import_source(sqlite_db, out)

    assert sorted(tables) == ["customer_info", "orders", "tags"]  # the view is skipped
    cust = _columns(out, "customer_info")
    assert {c: t for c, (t, _) in cust.items()} == {
        "id": "BIGINT",
        "name": "VARCHAR",
        "born": "DATE",
        "score": "DOUBLE",
        "vip": "BOOLEAN",
        "created": "TIMESTAMP",
        "price": "DOUBLE",
    }
    assert _query(out, "SELECT * FROM customer_info ORDER BY id") == [
        (1, "Ann", dt.date(1990, 5, 1), 3.5, True, dt.datetime(2024, 1, 1, 10), 9.99),
        (2, "Bob", None, None, False, None, None),  # bad values became NULL
    ]

    orders = _columns(out, "orders")
    assert orders["qty"][0] == "BIGINT"
    assert orders["note"][0] == "VARCHAR"  # no declared type
    assert orders["customer_id"][1] == "references customer_info(id)"
    assert _query(out, "SELECT order_no, qty, note FROM orders ORDER BY order_no") == [
        (10, 5, "first"),
        (11, None, None),
        (12, 2, "7"),
    ]

    pks = _primary_keys(out)
    assert pks["customer_info"] == ["id"]
    assert pks["orders"] == ["order_no"]
    # 'x' in an INT key became NULL, so that key could not be kept
    assert "tags" not in pks
    assert any(n.startswith("tags: primary key (tag_code) skipped") for n in tables.notes)
    assert _query(out, "SELECT count(*) FROM tags") == [(2,)]


def test_sqlite_comments_merge_with_fk_note(sqlite_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "shop.duckdb"
    import_source(
        sqlite_db,
        out,
        comments={"orders": {"__table__": "Orders", "customer_id": "Who ordered"}},
    )
    assert _columns(out, "orders")["customer_id"][1] == "Who ordered; references customer_info(id)"


# --------------------------------------------------------------------------- errors


def test_refuses_to_overwrite(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.duckdb"
    out.write_bytes(b"precious")
    with pytest.raises(FileExistsError, match="already exists"):
        import_source(folder, out)
    assert out.read_bytes() == b"precious"

    assert len(import_source(folder, out, replace=True)) == 5
    assert _query(out, "SELECT count(*) FROM sales_data") == [(3,)]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "source not found"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "no data files"),
        (lambda p: (p / "x.json").write_text("{}") and p / "x.json", "unknown file type"),
    ],
)
def test_clear_errors(tmp_path: Path, make, message: str) -> None:
    out = tmp_path / "out.duckdb"
    with pytest.raises(ValueError, match=message):
        import_source(make(tmp_path), out)
    assert not out.exists()


def test_failed_import_leaves_nothing(folder: Path, tmp_path: Path) -> None:
    (folder / "broken.parquet").write_bytes(b"not parquet at all")
    out = tmp_path / "out.duckdb"
    with pytest.raises(duckdb.Error):
        import_source(folder, out)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["src"]


def test_cli(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.duckdb"
    comments = tmp_path / "comments.yaml"
    comments.write_text("sales_data:\n  __table__: Orders\n  amount: Total\n")
    argv = [str(folder), "--out", str(out), "--comments", str(comments),
            "--primary-key", "sales_data=order_id"]
    assert main(argv) == 0
    assert "5 tables" in capsys.readouterr().out
    assert _columns(out, "sales_data")["amount"][1] == "Total"
    assert _primary_keys(out) == {"sales_data": ["order_id"]}

    assert main(argv) == 1
    assert "already exists" in capsys.readouterr().err
    assert main([str(tmp_path / "nope"), "--out", str(tmp_path / "x.duckdb")]) == 1
    assert "source not found" in capsys.readouterr().err
