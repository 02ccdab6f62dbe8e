"""Delivering results: files in four formats (``utils/delivery/export.py``) and email through a real SMTP
server started here on 127.0.0.1 (``utils/delivery/mail.py``): plain, and STARTTLS + AUTH with a test CA."""
from __future__ import annotations

import datetime as dt
import email
import io
import json
import math
import ssl
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pandas as pd
import pytest
import trustme
from conftest import clean_env
from smtp_server import Inbox, free_port, smtp_server

from duckask.utils.config import Settings
from duckask.utils.delivery import export, mail
from duckask.utils.delivery.export import ExportError, export_frame, format_for, frame_bytes
from duckask.utils.delivery.mail import MailError, build_message, send_result

ROOT = Path(__file__).resolve().parents[1]
TIME_COLUMNS = ("day", "at")
PASSWORD = "s3cret-Pa55word"


def sample_frame() -> pd.DataFrame:
    """Ints, floats, awkward strings, NULLs, a date column (as DuckDB gives them: date objects) and timestamps."""
    return pd.DataFrame({
        "id": [1, 2, 3],
        "score": [1.5, None, 0.1 + 0.2],
        "name": ["plain", 'comma, "quoted"', "ünïcødé ✓ 北京"],
        "note": [None, "two\nlines", "x"],
        "count": pd.array([10, None, 30], dtype="Int64"),
        "day": [dt.date(2024, 1, 2), dt.date(1999, 12, 31), None],
        "at": pd.Series([dt.datetime(2024, 1, 2, 3, 4, 5, 123456), None, dt.datetime(2000, 2, 29, 23, 59, 59)],
                        dtype="datetime64[us]"),
    })


def canon(value, digits: int | None = None):
    """One value, independent of the dtype a format reads it back as: numbers as float (to ``digits``
    significant digits), times as ISO text."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, dt.date):
        return pd.Timestamp(value).isoformat()
    if isinstance(value, (int, float)) or hasattr(value, "dtype"):
        return float(f"{value:.{digits}g}") if digits else float(value)
    return value


def rows(df: pd.DataFrame, round_times_to: str | None = None, digits: int | None = None) -> list[list]:
    df = df.copy()
    for col in TIME_COLUMNS:
        df[col] = pd.to_datetime(df[col], format="ISO8601")
        if round_times_to:
            df[col] = df[col].dt.round(round_times_to)
    return [[canon(v, digits) for v in row] for row in df.itertuples(index=False)]


# --------------------------------------------------------------------------- export
@pytest.mark.parametrize("name, read", [
    ("out.csv", pd.read_csv),
    ("out.parquet", pd.read_parquet),
    ("out.pq", pd.read_parquet),
    ("out.json", pd.read_json),
])
def test_each_format_round_trips_through_pandas(tmp_path, name, read):
    df = sample_frame()
    path = export_frame(df, tmp_path / name)
    assert path == tmp_path / name
    back = read(path)
    assert list(back.columns) == list(df.columns)
    assert rows(back) == rows(df)
    assert [p.name for p in tmp_path.iterdir()] == [name]   # no temp file left


def test_json_is_one_array_of_records_with_iso_dates(tmp_path):
    records = json.loads(export_frame(sample_frame(), tmp_path / "out.json").read_text(encoding="utf-8"))
    assert isinstance(records, list) and len(records) == 3
    assert records[0]["day"] == "2024-01-02" and records[2]["day"] is None
    assert dt.datetime.fromisoformat(records[0]["at"]) == dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
    assert records[1]["name"] == 'comma, "quoted"' and records[2]["score"] == 0.1 + 0.2   # numbers stay exact


def test_xlsx_round_trips_with_milliseconds_and_naive_utc(tmp_path):
    df = sample_frame()
    back = pd.read_excel(export_frame(df, tmp_path / "out.xlsx"))
    assert list(back.columns) == list(df.columns)
    # Excel holds milliseconds, and openpyxl writes floats to 16 significant digits (Excel shows 15).
    assert rows(back, round_times_to="ms", digits=15) == rows(df, round_times_to="ms", digits=15)
    aware = pd.DataFrame({"at": pd.to_datetime(["2024-01-02 03:04:05+02:00"]),
                          "obj": pd.Series([dt.datetime(2024, 1, 2, 3, tzinfo=dt.timezone(dt.timedelta(hours=-5)))],
                                           dtype=object)})
    back = pd.read_excel(export_frame(aware, tmp_path / "aware.xlsx"))
    assert back["at"][0] == pd.Timestamp("2024-01-02 01:04:05")
    assert back["obj"][0] == pd.Timestamp("2024-01-02 08:00:00")


def test_format_comes_from_the_argument_or_the_suffix(tmp_path):
    assert format_for("a.PARQUET") == "parquet" and format_for("a.pq") == "parquet"
    assert format_for("a.dat", "CSV") == "csv"
    path = export_frame(sample_frame(), tmp_path / "result.dat", "csv")
    assert path.read_text(encoding="utf-8").startswith("id,score,name")


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch, fmt):
    target = tmp_path / f"keep.{fmt}"
    target.write_bytes(b"the old contents")

    def half_write(df, tmp):
        Path(tmp).write_bytes(b"half a fi")
        raise RuntimeError("disk full")

    monkeypatch.setitem(export.WRITERS, fmt, half_write)
    with pytest.raises(ExportError, match="could not write .*disk full"):
        export_frame(sample_frame(), target)
    assert target.read_bytes() == b"the old contents"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_writer_failing_on_the_data_leaves_the_old_file(tmp_path):
    target = tmp_path / "keep.xlsx"
    target.write_bytes(b"old")
    with pytest.raises(ExportError, match="could not write"):
        export_frame(pd.DataFrame({"x": ["control \x01 character"]}), target)   # openpyxl refuses it
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.xlsx"]


def test_export_errors_say_what_to_do(tmp_path):
    with pytest.raises(ExportError, match=r"\.csv, \.parquet.*csv, parquet, json, xlsx"):
        export_frame(sample_frame(), tmp_path / "out.txt")
    with pytest.raises(ExportError, match="unknown format 'xml': use one of csv, parquet, json, xlsx"):
        export_frame(sample_frame(), tmp_path / "out.csv", "xml")
    with pytest.raises(ExportError, match="does not exist: create it first"):
        export_frame(sample_frame(), tmp_path / "missing" / "out.csv")
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(ExportError, match="is a folder: give a file name"):
        export_frame(sample_frame(), tmp_path / "folder.csv")


def test_frame_bytes_gives_the_file_and_its_media_type():
    df = sample_frame()
    data, media = frame_bytes(df, "csv")
    assert media == "text/csv" and rows(pd.read_csv(io.BytesIO(data))) == rows(df)
    data, media = frame_bytes(df, "parquet")
    assert media == "application/vnd.apache.parquet" and data[:4] == b"PAR1"
    data, media = frame_bytes(df, "json")
    assert media == "application/json" and len(json.loads(data)) == 3
    data, media = frame_bytes(df, "xlsx")
    assert media == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" and data[:2] == b"PK"


@pytest.fixture
def people_db(tmp_path) -> Path:
    path = tmp_path / "people.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE people (id INTEGER, name VARCHAR, born DATE)")
    con.execute("INSERT INTO people VALUES (1, 'Ann, \"the\" first', DATE '1990-05-01'), (2, 'Bø', NULL)")
    con.close()
    return path


def test_export_runs_on_its_own(tmp_path, people_db, isolated_env):
    out = tmp_path / "out.parquet"
    done = subprocess.run([sys.executable, "-m", "duckask.utils.delivery.export", "--db", str(people_db),
                           "SELECT * FROM people ORDER BY id", str(out)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=clean_env(isolated_env, XDG_CONFIG_HOME=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout and "(2 rows)" in done.stdout
    back = pd.read_parquet(out)
    assert back["name"].tolist() == ['Ann, "the" first', "Bø"]
    assert back["born"][0] == dt.date(1990, 5, 1) and back["born"].isna()[1]


def test_export_main_fails_cleanly(tmp_path, people_db, isolated_env, capsys):
    assert export.main(["--db", str(people_db), "SELECT nope FROM people", str(tmp_path / "x.csv")]) == 2
    assert "nope" in capsys.readouterr().err and not (tmp_path / "x.csv").exists()
    assert export.main(["--db", str(people_db), "SELECT 1", str(tmp_path / "x.txt")]) == 2
    assert "cannot tell the format" in capsys.readouterr().err


# --------------------------------------------------------------------------- email
@pytest.fixture
def plain_server():
    with smtp_server() as served:
        yield served


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_server(ca):
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_context)
    inbox = Inbox(b"ann@example.com", PASSWORD)
    with smtp_server(inbox, tls_context=server_context, require_starttls=True, authenticator=inbox.authenticate,
                     auth_require_tls=True) as served:
        yield served


@pytest.fixture
def trusting_context(ca) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def a_result(df: pd.DataFrame | None = None, question: str = "Who are the players, by id?") -> SimpleNamespace:
    return SimpleNamespace(question=question, answer="Three players: plain, quoted and unicode.",
                           sql="SELECT id, score, name\nFROM players\nORDER BY id",
                           df=sample_frame() if df is None else df, db="players.duckdb")


def plain_settings(port: int, **more) -> Settings:
    return Settings(smtp_host="127.0.0.1", smtp_port=port, smtp_starttls=False, smtp_timeout_s=5,
                    smtp_from="duckask@example.com", **more)


def received(inbox: Inbox) -> email.message.EmailMessage:
    return inbox.only()


def test_a_result_is_mailed_with_the_table_attached(plain_server):
    inbox, port = plain_server
    sent = send_result(a_result(), "Bo <bo@example.com>, cy@example.org", plain_settings(port))
    msg = received(inbox)
    assert msg["From"] == "duckask@example.com" and msg["Subject"] == "duckask: Who are the players, by id?"
    assert [a.addr_spec for a in msg["To"].addresses] == ["bo@example.com", "cy@example.org"]
    assert msg["Message-ID"] == sent["Message-ID"]
    body = msg.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")   # SMTP's line ends
    assert "Who are the players, by id?" in body and "Three players: plain, quoted and unicode." in body
    assert "    SELECT id, score, name\n    FROM players\n    ORDER BY id" in body
    assert "3 rows, attached as result.csv" in body and "ünïcødé ✓ 北京" in body and "players.duckdb" in body
    [attachment] = msg.iter_attachments()
    assert attachment.get_filename() == "result.csv" and attachment.get_content_type() == "text/csv"
    assert rows(pd.read_csv(io.BytesIO(attachment.get_payload(decode=True)))) == rows(sample_frame())


def test_the_attachment_can_be_parquet(plain_server):
    inbox, port = plain_server
    send_result(a_result(), ["bo@example.com"], plain_settings(port), attachment_format="parquet",
                subject="Players\nweekly")
    msg = received(inbox)
    assert msg["Subject"] == "Players weekly"
    [attachment] = msg.iter_attachments()
    assert attachment.get_filename() == "result.parquet"
    assert attachment.get_content_type() == "application/vnd.apache.parquet"
    assert rows(pd.read_parquet(io.BytesIO(attachment.get_payload(decode=True)))) == rows(sample_frame())


def test_long_results_stay_out_of_the_body_and_long_questions_out_of_the_subject():
    question = "How many games did each of the players play in every season, across\nall the leagues we have?"
    msg = build_message(to=["bo@example.com"], sender="duckask@example.com", subject=f"duckask: {question}",
                        question=question, answer="Many.", sql=None, df=pd.DataFrame({"n": range(25)}))
    body = msg.get_body(preferencelist=("plain",)).get_content()
    assert "25 rows, attached as result.csv" in body and "\n 24" not in body and "SQL:" not in body
    assert "\n" not in msg["Subject"]
    cut = mail.one_line(question, mail.SUBJECT_CHARS)
    assert len(cut) == 60 and cut.endswith("…") and "\n" not in cut
    no_table = build_message(to=["bo@example.com"], sender="d@example.com", subject="s", question="q",
                             answer="a", sql=None, df=None)
    assert "No result table." in no_table.get_content() and not list(no_table.iter_attachments())


def test_starttls_and_login(tls_server, trusting_context):
    inbox, port = tls_server
    settings = Settings(smtp_host="127.0.0.1", smtp_port=port, smtp_user="ann@example.com", smtp_password=PASSWORD,
                        smtp_timeout_s=5)
    send_result(a_result(), "bo@example.com", settings, ssl_context=trusting_context)
    assert inbox.logins == [(b"ann@example.com", PASSWORD.encode())]
    msg = received(inbox)
    assert msg["From"] == "ann@example.com"   # no smtp_from: the login name, being an address
    assert "Three players" in msg.get_body(preferencelist=("plain",)).get_content()


def test_a_wrong_password_is_refused_without_showing_it(tls_server, trusting_context):
    inbox, port = tls_server
    wrong = "wrong-Pa55word-xyz"
    settings = Settings(smtp_host="127.0.0.1", smtp_port=port, smtp_user="ann@example.com", smtp_password=wrong,
                        smtp_timeout_s=5)
    with pytest.raises(MailError, match=f"127.0.0.1:{port} refused the login.*smtp_password") as err:
        send_result(a_result(), "bo@example.com", settings, ssl_context=trusting_context)
    assert wrong not in str(err.value) and err.value.__cause__ is None
    assert not inbox.messages


def test_an_untrusted_certificate_fails_the_handshake(tls_server):
    _, port = tls_server
    settings = Settings(smtp_host="127.0.0.1", smtp_port=port, smtp_user="ann@example.com", smtp_password=PASSWORD,
                        smtp_timeout_s=5)
    with pytest.raises(MailError, match=f"TLS handshake with 127.0.0.1:{port} failed") as err:
        send_result(a_result(), "bo@example.com", settings)   # the system CAs do not know the test CA
    assert PASSWORD not in str(err.value)


def test_a_login_without_starttls_is_not_offered(tls_server):
    _, port = tls_server
    settings = plain_settings(port, smtp_user="ann@example.com", smtp_password=PASSWORD)
    with pytest.raises(MailError, match="smtp_starttls = true") as err:
        send_result(a_result(), "bo@example.com", settings)
    assert PASSWORD not in str(err.value)


def test_mail_errors_say_what_to_check(plain_server):
    _, port = plain_server
    with pytest.raises(MailError, match="set smtp_host in the config file or DUCKASK_SMTP_HOST"):
        send_result(a_result(), "bo@example.com", Settings())
    closed = free_port()
    with pytest.raises(MailError, match=f"127.0.0.1:{closed}: connection refused"):
        send_result(a_result(), "bo@example.com", plain_settings(closed))
    for bad in ("bo", "bo@localhost", "bo@example.com; cy@example.org", "bo@example.com\nBcc: x@evil.example", ""):
        with pytest.raises(MailError, match="recipient"):
            send_result(a_result(), bad, plain_settings(port))
    with pytest.raises(MailError, match=f"127.0.0.1:{port} does not offer STARTTLS"):
        send_result(a_result(), "bo@example.com", Settings(smtp_host="127.0.0.1", smtp_port=port, smtp_timeout_s=5))


def test_mail_runs_on_its_own(plain_server, people_db, isolated_env, tmp_path, monkeypatch, capsys):
    inbox, port = plain_server
    config = tmp_path / "config.yaml"
    config.write_text(f"smtp_host: 127.0.0.1\nsmtp_port: {port}\nsmtp_starttls: false\nsmtp_from: d@example.com\n")
    monkeypatch.setenv("DUCKASK_CONFIG", str(config))
    sql = "SELECT id, name FROM people ORDER BY id"
    assert mail.main(["--db", str(people_db), "--to", "bo@example.com", "--format", "json", sql]) == 0
    assert "sent to bo@example.com" in capsys.readouterr().out
    msg = received(inbox)
    assert msg["Subject"] == f"duckask: {sql}"
    [attachment] = msg.iter_attachments()
    assert json.loads(attachment.get_payload(decode=True)) == [{"id": 1, "name": 'Ann, "the" first'},
                                                              {"id": 2, "name": "Bø"}]
    assert mail.main(["--db", str(people_db), "--to", "bo", sql]) == 2
    assert "bad recipient address 'bo'" in capsys.readouterr().err
