"""Bad input: every mistake a user can make gets a one-line message, a hint, exit code 2 and no
traceback; in-scope files that are broken in any way are indexed as far as possible and recorded as
parse errors while the build goes on."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from fixtures.crash import assert_user_error
from fixtures.helpers import make_repo, remount, rows, tmpfs, tpindex
from fixtures.small import ABSTRACT, TP, fails, parser

# -- the source and the versions -----------------------------------------------------------------------------


def test_not_a_git_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    fails(
        "build",
        "--repo",
        tmp_path / "plain",
        "--tags",
        "v1..",
        "--db",
        tmp_path / "x.db",
        words=("is not a git repository", "--from-pypi"),
    )
    fails(
        "build",
        "--repo",
        tmp_path / "missing",
        "--tags",
        "v1..",
        "--db",
        tmp_path / "x.db",
        words=("is not a git repository",),
    )
    assert not (tmp_path / "x.db").exists()


def test_unknown_tag(small_repo, tmp_path):
    fails(
        "build",
        "--repo",
        small_repo,
        "--tags",
        "v0.6.4",
        "--db",
        tmp_path / "x.db",
        words=("v0.6.4", "v0.6.3"),
    )
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize(
    "spec", ["v0.6.3..v0.7.0..v0.8.0", "..", "v0.6.3,,v0.7.0", "v0.7.0..v0.6.3", "", " , "]
)
def test_malformed_spec(small_repo, tmp_path, spec):
    fails("build", "--repo", small_repo, "--tags", spec, "--db", tmp_path / "x.db")


def test_no_vllm_files_in_scope_is_a_warning_and_zero_rows(tmp_path):
    repo = make_repo(tmp_path / "repo", {"v1.0.0": {"README.md": "not vllm\n", "src/app.py": "x = 1\n"}})
    db = tmp_path / "x.db"
    result = tpindex("build", "--repo", repo, "--tags", "v1.0.0", "--db", db)
    assert "warning: v1.0.0: no parser registry found" in result.output
    assert "Traceback" not in result.output
    assert rows(db, "select label, status, file_count, registry from versions") == [
        ("v1.0.0", "complete", 0, "none")
    ]
    assert rows(db, "select count(*) from files") == [(0,)]
    assert rows(db, "select count(*) from parser_map") == [(0,)]
    tpindex("check", "--db", db)


# -- the database ----------------------------------------------------------------------------------------------


def test_missing_db_directory(small_repo, tmp_path):
    fails(
        "build",
        "--repo",
        small_repo,
        "--tags",
        "v0.6.3",
        "--db",
        tmp_path / "no" / "such" / "x.db",
        words=("does not exist", "mkdir"),
    )
    for cmd in (["which", "hermes"], ["diff", "v0.6.3", "v0.7.0"], ["check"], ["export"], ["versions"]):
        fails(*cmd, "--db", tmp_path / "no" / "x.db", words=("no database",))


@pytest.fixture
def readonly_dir(tmp_path):
    """A directory nobody can write: a read-only tmpfs as root (root ignores permission bits), else 0555."""
    if os.geteuid() == 0:
        with tmpfs(tmp_path / "ro", "ro,size=64k") as d:
            yield d
        return
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    yield d
    d.chmod(0o755)


def test_unwritable_db_directory(small_repo, readonly_dir):
    fails(
        "build",
        "--repo",
        small_repo,
        "--tags",
        "v0.6.3",
        "--db",
        readonly_dir / "x.db",
        words=("cannot write", "permissions"),
    )


def test_unwritable_database_file_is_refused_but_readable(small_repo, built, tmp_path):
    """A database on read-only media: build refuses it clearly; which, diff and check still read it."""
    with tmpfs(tmp_path / "ro", "size=1m", "needs root to mount a read-only filesystem") as d:
        db = d / "index.db"
        db.write_bytes(built.read_bytes())  # a WAL database, closed cleanly: no -wal or -shm file
        remount(d, "ro")
        fails("build", "--repo", small_repo, "--tags", "v0.6.3", "--db", db, words=("cannot write",))
        assert "Hermes" in tpindex("which", "hermes", "--db", db).output
        tpindex("check", "--db", db)


def test_not_a_sqlite_file(small_repo, tmp_path):
    db = tmp_path / "notes.db"
    db.write_text("these are my notes, not a database\n" * 100)
    before = db.read_bytes()
    fails("build", "--repo", small_repo, "--tags", "v0.6.3", "--db", db, words=("not a tpindex database",))
    for cmd in (["which", "hermes"], ["diff", "v0.6.3", "v0.7.0"], ["check"], ["export"], ["versions"]):
        fails(*cmd, "--db", db, words=("not a tpindex database",))
    assert db.read_bytes() == before


def test_sqlite_database_of_something_else(small_repo, tmp_path):
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("create table people (name text)")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    fails("build", "--repo", small_repo, "--tags", "v0.6.3", "--db", db, words=("not a tpindex one",))
    # refused before anything changed: not switched to WAL mode, no lock file beside it
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]
    fails("which", "hermes", "--db", db, words=("not a tpindex one",))
    fails("check", "--db", db, words=("not a tpindex one",))
    assert rows(db, "select name from sqlite_master") == [("people",)]
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_export_never_writes_over_a_database(built, tmp_path):
    """-o naming the database (directly, through a symbolic or hard link, or one of its files) or any
    other SQLite file is refused; the files are left as they were."""
    import json

    db = tmp_path / "index.db"
    db.write_bytes(built.read_bytes())
    before = db.read_bytes()
    (tmp_path / "link.db").symlink_to(db)
    os.link(db, tmp_path / "hard.db")
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("create table notes (text text)")
    conn.commit()
    conn.close()
    other_before = other.read_bytes()
    for out, via in [
        (db, db),
        (tmp_path / "link.db", db),
        (tmp_path / "hard.db", db),
        (db, tmp_path / "link.db"),
    ]:
        fails("export", "--at", "v0.6.3", "-o", out, "--db", via, words=("refusing to write over it",))
    fails("export", "-o", other, "--db", db, words=("is an SQLite database",))
    lock = tmp_path / "index.db.lock"  # a file of the database reached through a link to it
    lock.write_text("")
    fails("export", "-o", lock, "--db", tmp_path / "link.db", words=("refusing to write over it",))
    assert db.read_bytes() == before and other.read_bytes() == other_before
    out = tmp_path / "parsers.json"
    out.write_text("an older export\n")
    tpindex("export", "--at", "v0.6.3", "-o", out, "--db", db)
    assert json.loads(out.read_text())["version"] == "v0.6.3"


def set_schema(db, version: int) -> None:
    conn = sqlite3.connect(db)
    conn.execute("update meta set value = ? where key = 'schema_version'", [str(version)])
    conn.commit()
    conn.close()


def test_newer_schema_is_refused(small_repo, built, tmp_path):
    db = tmp_path / "newer.db"
    db.write_bytes(built.read_bytes())
    set_schema(db, 99)
    before = db.read_bytes()
    fails("build", "--repo", small_repo, "--tags", "v0.6.3", "--db", db, words=("newer tpindex", "schema 99"))
    for cmd in (["which", "hermes"], ["diff", "v0.6.3", "v0.7.0"], ["check"], ["versions"]):
        fails(*cmd, "--db", db, words=("newer tpindex",))
    assert db.read_bytes() == before


def test_older_schema_is_migrated(small_repo, built, tmp_path, monkeypatch):
    """A tpindex one schema ahead (a made-up migration adds a column): a build migrates a database of the
    current schema in place and keeps its versions."""
    import indexer.store.database
    import indexer.store.schema

    now = indexer.store.database.SCHEMA_VERSION
    db = tmp_path / "older.db"
    db.write_bytes(built.read_bytes())
    monkeypatch.setattr(indexer.store.database, "SCHEMA_VERSION", now + 1)
    monkeypatch.setattr(
        indexer.store.schema,
        "STEPS",
        {
            **indexer.store.schema.STEPS,
            now: lambda db: indexer.store.schema.add_columns(db, "versions", note=str),
        },
    )
    out = tpindex("check", "--db", db, ok=False)
    assert out.exit_code == 1 and f"schema version {now}" in out.output and "migrates" in out.output
    tpindex("build", "--repo", small_repo, "--tags", "v0.6.3..", "--db", db, "-q")
    assert rows(db, "select value from meta where key = 'schema_version'") == [(str(now + 1),)]
    assert "note" in [c[1] for c in rows(db, "pragma table_info(versions)")]
    assert rows(db, "select label from versions order by ord") == [("v0.6.3",), ("v0.7.0",)]
    tpindex("check", "--db", db)


def test_schema_older_than_any_migration_is_refused(small_repo, built, tmp_path):
    db = tmp_path / "ancient.db"
    db.write_bytes(built.read_bytes())
    set_schema(db, 0)
    before = db.read_bytes()
    fails("build", "--repo", small_repo, "--tags", "v0.6.3", "--db", db, words=("schema 0",))
    assert db.read_bytes() == before


# -- questions the database cannot answer ------------------------------------------------------------------------


def test_unknown_parser_name_for_which(built):
    fails("which", "hermez", "--db", built, words=("hermez", "did you mean: hermes"))
    fails("which", "zzzz", "--db", built, words=("zzzz",))


def test_version_not_indexed_for_diff(built):
    fails("diff", "v0.6.3", "v0.9.0", "--db", built, words=("v0.9.0", "not indexed"))
    fails("diff", "v0.5.0", "v0.7.0", "--db", built, words=("v0.5.0",))
    fails("which", "hermes", "--at", "v0.9.0", "--db", built, words=("v0.9.0",))


def test_db_path_with_uri_characters(small_repo, tmp_path):
    db = tmp_path / "odd?name#1%.db"
    tpindex("build", "--repo", small_repo, "--tags", "v0.6.3..", "--db", db, "-q")
    assert "Hermes" in tpindex("which", "hermes", "--db", db).output
    tpindex("check", "--db", db)
    assert {p.name for p in tmp_path.iterdir()} <= {db.name + s for s in ("", "-wal", "-shm", ".lock")}


# -- broken files in scope ---------------------------------------------------------------------------------------


def registered(name: str, cls: str) -> bytes:
    return (
        f"from .abstract_tool_parser import ToolParser, ToolParserManager\n\n\n"
        f"@ToolParserManager.register_module({name!r})\nclass {cls}(ToolParser):\n"
        f"    def extract_tool_calls(self, text):\n        return text  # TODO: {name}\n"
    ).encode()


def big_code(megabytes: int) -> bytes:
    chunk = b"".join(
        b"def helper_%d(a, b):\n    return [a + b for _ in range(%d)]\n\n\n" % (i, i) for i in range(2000)
    )
    out = bytearray(registered("huge", "HugeToolParser"))
    while len(out) < megabytes << 20:
        out += chunk
    return bytes(out)


BROKEN = {
    "syntax": registered("syntax", "SyntaxToolParser") + b"\n\ndef broken(:\n    pass\n",
    "nul": registered("nul", "NulToolParser").replace(b"return text", b"return 'a\0b'"),
    "latin1": b"# caf\xe9 cr\xe8me\n" + registered("latin1", "Latin1ToolParser"),
    "huge": big_code(10),
    "parens": registered("parens", "ParensToolParser") + b"x = " + b"(" * 20000 + b"1" + b")" * 20000 + b"\n",
    "blocks": registered("blocks", "BlocksToolParser")
    + b"".join(b" " * i + b"if x%d:\n" % i for i in range(1500))
    + b" " * 1500
    + b"pass\n",
    "classes": registered("classes", "ClassesToolParser")
    + b"".join(b" " * (4 * i) + b"class C%d(ToolParser):\n" % i for i in range(300))
    + b" " * 1200
    + b"pass\n",
    "unclosed": registered("unclosed", "UnclosedToolParser") + b'x = """never closed\n' + b"y = 1\n" * 100,
    "empty": b"",
    "binary": bytes(range(256)) * 64,
}


@pytest.mark.slow
def test_broken_files_are_indexed_as_far_as_possible(tmp_path):
    files = {f"{TP}/{k}_tool_parser.py": v for k, v in BROKEN.items()}
    files[f"{TP}/abstract_tool_parser.py"] = ABSTRACT
    files[f"{TP}/hermes_tool_parser.py"] = parser("hermes", "Hermes")
    repo = make_repo(
        tmp_path / "repo", {"v0.6.3": files, "v0.7.0": {f"{TP}/late_tool_parser.py": parser("late", "L")}}
    )
    db = tmp_path / "x.db"
    result = tpindex("build", "--repo", repo, "--tags", "v0.6.3..", "-j", "2", "--db", db)
    assert "Traceback" not in result.output
    assert rows(db, "select label, status from versions order by ord") == [
        ("v0.6.3", "complete"),
        ("v0.7.0", "complete"),
    ]
    assert len(rows(db, "select file from version_files where version = 'v0.6.3'")) == len(files)
    status = dict(rows(db, "select file, parse_status from version_files where version = 'v0.6.3'"))
    assert status[f"{TP}/syntax_tool_parser.py"] == "syntax-errors"
    assert status[f"{TP}/nul_tool_parser.py"] == "nul-bytes"
    assert status[f"{TP}/latin1_tool_parser.py"] == "not-utf8"
    assert status[f"{TP}/unclosed_tool_parser.py"] == "syntax-errors"
    assert status[f"{TP}/binary_tool_parser.py"] != "ok"
    assert status[f"{TP}/hermes_tool_parser.py"] == status[f"{TP}/empty_tool_parser.py"] == "ok"
    errors = {
        r[0]: r
        for r in rows(
            db,
            "select file, parse_status, error_count, first_error_line, error"
            " from parse_errors where version = 'v0.6.3'",
        )
    }
    assert set(errors) == {f for f, s in status.items() if s not in ("ok", "not-parsed")}
    assert all(r[4] for r in errors.values())  # every parse error says what it is
    syntax = errors[f"{TP}/syntax_tool_parser.py"]
    assert (
        syntax[2] >= 1
        and syntax[3] == BROKEN["syntax"].count(b"\n", 0, BROKEN["syntax"].index(b"def broken")) + 1
    )
    # the registration at the top of every file that has one is found, whatever follows it
    names = {r[0] for r in rows(db, "select name from registry where version = 'v0.6.3'")}
    assert names >= {"hermes", "syntax", "nul", "latin1", "huge", "parens", "blocks", "classes", "unclosed"}
    assert {r[0] for r in rows(db, "select name from parser_map_v where version = 'v0.7.0'")} >= names | {
        "late"
    }
    tpindex("check", "--db", db)


# -- tpindex check on damaged databases ---------------------------------------------------------------------------


def damaged(built, tmp_path, *sql: str) -> Path:
    db = tmp_path / "damaged.db"
    db.write_bytes(built.read_bytes())
    conn = sqlite3.connect(db)
    conn.execute("pragma foreign_keys = off")
    for s in sql:
        conn.execute(s)
    conn.commit()
    conn.close()
    return db


def test_check_passes_on_a_good_database(built):
    out = tpindex("check", "--db", built).output
    assert out.startswith("ok: 2 version(s) (v0.6.3 .. v0.7.0)"), out
    assert "3 blob(s)" in out and "2 parser name(s)" in out and "1 marker(s)" in out


@pytest.mark.parametrize(
    "sql, says",
    [
        (["delete from blobs where id = (select blob_id from units limit 1)"], "unit(s) point at no blob"),
        (
            ["delete from units where id = (select unit_id from files limit 1)"],
            "file row(s) point at no unit",
        ),
        (
            ["update versions set status = 'building' where label = 'v0.7.0'"],
            "version v0.7.0 is not complete",
        ),
        (
            ["update versions set status = 'building' where label = 'v0.7.0'"],
            "parser_map row(s) belong to incomplete",
        ),
        (["update versions set file_count = 99 where label = 'v0.6.3'"], "records 99 file(s) but maps 2"),
        (["update versions set ord = 5 where label = 'v0.6.3'"], "does not follow version order"),
        (["update versions set ord = null"], "missing or repeated order numbers"),
        (["update meta set value = '0' where key = 'schema_version'"], "schema 0"),
        (["update blobs set facts = x'00ff' where status = 'ok'"], "unreadable facts"),
        (["drop trigger markers_ad", "delete from markers"], "markers_fts is out of sync"),
        (
            [
                "drop trigger markers_ai",
                "insert into markers(unit_id, kind, line, text) select id, 'TODO', 1,"
                " 'unindexed words' from units limit 1",
            ],
            "are not indexed",
        ),
        (["delete from parser_map"], "has a registry but no parser_map rows"),
        (["delete from parser_map where name = 'hermes'"], "parser_hops row(s) belong to no parser_map row"),
        (["drop view registry"], "missing tables or views: registry"),
        (
            [
                "insert into files(version_id, path, unit_id) values (42, 'x.py', (select id from units limit 1))"
            ],
            "point at missing versions",
        ),
    ],
)
def test_check_finds_what_is_wrong(built, tmp_path, sql, says):
    db = damaged(built, tmp_path, *sql)
    result = tpindex("check", "--db", db, ok=False)
    assert result.exit_code in (1, 2), result.output
    assert says in result.output, result.output
    assert "Traceback" not in result.output
    if result.exit_code == 1:
        assert "problem(s)" in result.output and "Hint:" in result.output


def corrupted_copies(built, tmp_path):
    """The database with 300 bytes of garbage at the start, then at the end, of each page in turn."""
    data = built.read_bytes()
    size = sqlite3.connect(built).execute("pragma page_size").fetchone()[0]
    for page in range(len(data) // size):
        for at in (page * size + (100 if page == 0 else 0), (page + 1) * size - 300):
            db = tmp_path / f"corrupt-{at}.db"
            db.write_bytes(data[:at] + b"\xa5" * 300 + data[at + 300 :])
            yield db


@pytest.mark.parametrize(
    "cmd",
    [
        ["check"],
        ["build", "--tags", "v0.6.3.."],
        ["which", "hermes"],
        ["versions"],
        ["diff", "v0.6.3", "v0.7.0"],
    ],
)
def test_damaged_database_pages(small_repo, built, tmp_path, cmd):
    """No traceback whichever page is damaged: check reports it (exit 1) or refuses the file (exit 2)."""
    if cmd[0] == "build":
        cmd = [*cmd, "--repo", str(small_repo), "-q"]
    for db in corrupted_copies(built, tmp_path):
        result = tpindex(*cmd, "--db", db, ok=False)
        assert result.exit_code in (0, 1, 2), (db.name, result.output)
        if result.exit_code == 2:
            assert_user_error(result)
        if cmd[0] == "check" and result.exit_code == 1:
            assert "problem" in result.output


# -- output that cannot be written, damaged meta rows, absurd input -------------------------------------------------


def test_export_to_a_place_it_cannot_write(built, tmp_path):
    fails("export", "-o", tmp_path / "no" / "such" / "out.json", "--db", built, words=("does not exist",))
    fails("export", "-o", tmp_path, "--db", built, words=("is a directory",))
    fails("export", "-o", "/dev/full", "--db", built, words=("No space left on device", "free some space"))


def test_export_to_a_file_it_may_not_write(built, tmp_path):
    """An existing file on read-only media (root ignores permission bits)."""
    with contextlib.ExitStack() as mounted:
        if os.geteuid() != 0:
            out = tmp_path / "locked.json"
            out.write_text("{}")
            out.chmod(0o444)
        else:
            out = mounted.enter_context(tmpfs(tmp_path / "ro", "size=64k")) / "locked.json"
            out.write_text("{}")
            remount(out.parent, "ro")
        fails("export", "-o", out, "--db", built, words=("cannot write", "choose another -o"))
        assert out.read_text() == "{}"


def tpindex_process(*args, stdout=None):
    import sys

    exe = Path(sys.executable).parent / "tpindex"
    return subprocess.run(
        [str(exe), *map(str, args)], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "cmd",
    [["versions"], ["which", "hermes"], ["export"], ["diff", "v0.6.3", "v0.7.0"], ["check"], ["--help"]],
)
def test_standard_output_on_a_full_device(built, cmd):
    """`tpindex ... > /dev/full`: one line and a hint on standard error, exit 2; no traceback, nothing
    printed again when Python flushes at exit."""
    with open("/dev/full", "w") as full:
        result = tpindex_process(*cmd, *(["--db", built] if cmd != ["--help"] else []), stdout=full)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 2 and lines[0] == "Error: cannot write the output (No space left on device)", (
        result.stderr
    )
    assert lines[1].startswith("Hint: ")


def test_standard_output_closed_by_its_reader(built):
    """`tpindex versions | head -0`: the reader went away; nothing on standard error, exit 1 (click's way)."""
    import sys

    exe = Path(sys.executable).parent / "tpindex"
    proc = subprocess.Popen(
        [str(exe), "versions", "--db", str(built)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 1 and err == "", err


@pytest.mark.parametrize("value", ["one", "", "1.5", "9" * 5000])
def test_a_schema_version_that_is_not_a_number(small_repo, built, tmp_path, value):
    db = damaged(built, tmp_path, f"update meta set value = '{value}' where key = 'schema_version'")
    before = db.read_bytes()
    for cmd in (["versions"], ["which", "hermes"], ["build", "--repo", small_repo, "--tags", "v0.6.3"]):
        result = fails(*cmd, "--db", db, words=("meta.schema_version", "not a number"))
        assert len(result.output) < 400, result.output
    result = tpindex("check", "--db", db, ok=False)
    assert result.exit_code == 1 and "problem: meta.schema_version" in result.output, result.output
    assert "Traceback" not in result.output
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "spec",
    ["v0.6.3.." + "9" * 10_000, "9" * 10_000 + "..v0.7.0", "v" + "9" * 10_000, "v0.6.3..v0.7." + "1" * 5000],
)
def test_an_absurdly_long_version_is_a_malformed_spec(small_repo, tmp_path, spec):
    result = fails("build", "--repo", small_repo, "--tags", spec, "--db", tmp_path / "x.db")
    assert len(result.output) < 500 and "int" not in result.output.lower().replace("hint", ""), result.output
    assert not (tmp_path / "x.db").exists()


def test_every_older_schema_migrates_through_one_named_step_each():
    """store/schema.py: a function (named, saying what it does) from each schema a build migrates to the next."""
    from indexer.store.database import OLDEST_MIGRATED, SCHEMA_VERSION
    from indexer.store.schema import STEPS, missing_steps

    assert missing_steps(OLDEST_MIGRATED) == []
    assert sorted(STEPS) == list(range(OLDEST_MIGRATED, SCHEMA_VERSION))
    assert all(f.__name__ != "<lambda>" and f.__doc__ for f in STEPS.values())
