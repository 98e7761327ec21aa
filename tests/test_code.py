"""The code in the database: stored once per blob, read back exactly, and answered by `show`, `diff --code`
and `grep` without the repository. `grep` is compared with real `git grep -n -E` over the same tags and
paths, run with LC_ALL=C.UTF-8 (the locale the translation assumes).

The fixture history (hand-written files, no vLLM code):

    v0.1.0  alpha (non-ASCII text, regex metacharacters, CRLF lines), beta, a binary file, a Latin-1
            file, an empty file, a file without a final newline; a test file (recorded, not stored)
    v0.2.0  alpha moved to a new path unchanged; beta edited (lines inserted: its lines move); the
            binary file changed
    v0.3.0  beta deleted; gamma added; the last file gains its final newline
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures.helpers import as_schema_11, build_tags, imported_modules, make_repo, rows, tpindex

P = "vllm/tool_parsers"
ALPHA = f"{P}/alpha_tool_parser.py"
ALPHA_MOVED = f"{P}/renamed_tool_parser.py"
BETA = f"{P}/beta_tool_parser.py"
GAMMA = "vllm/parser/gamma.py"
BINARY = f"{P}/blob_tool_parser.py"
LATIN = f"{P}/latin_tool_parser.py"
EMPTY = f"{P}/empty_tool_parser.py"
NO_EOL = "vllm/reasoning/tail_reasoning_parser.py"

ALPHA_TEXT = (
    "# café au lait: CAFÉ, naïve, Σίσυφος, 東京, ok ✓ \ufffd\n"
    "import re\n"
    "\n"
    "class AlphaToolParser:\n"
    "    pattern = r'^caret and $HOME (a|b)* [x] {2}'\n"
    "    x = a.b(c)[0] * 2 + y?  # metacharacters\n"
    "\n"
    "    def extract_tool_calls_streaming(self, delta):\n"
    "        foo_bar = foobaz = 'aab' + 'abab'\n"
    "        return delta  # TODO: İstanbul ılık\n"
    "\r\n"
    "    def extract_tool_calls(self, text):\r\n"
    "        return text\\\\n  # a backslash\r\n"
)
BETA_V1 = (
    "from vllm.tool_parsers.alpha_tool_parser import AlphaToolParser\n"
    "\n"
    "class BetaToolParser(AlphaToolParser):\n"
    "    def extract_tool_calls_streaming(self, delta):\n"
    "        return None\n"
)
BETA_V2 = (
    "from vllm.tool_parsers.renamed_tool_parser import AlphaToolParser\n"
    "\n"
    "\n"
    "# FIXME: inserted lines move the ones below\n"
    "class BetaToolParser(AlphaToolParser):\n"
    "    supports_required_and_named = False\n"
    "\n"
    "    def extract_tool_calls_streaming(self, delta):\n"
    "        return None\n"
)
GAMMA_TEXT = (
    "class GammaParser:\n"
    "    def parse(self, text):\n"
    "        # HACK: tool_choice=required\n"
    "        return text.strip()\n"
)
HISTORY = {
    "v0.1.0": {
        ALPHA: ALPHA_TEXT.encode(),
        BETA: BETA_V1.encode(),
        BINARY: b"MAGIC\x00\x01\x02 extract_tool_calls payload\nmore\n",
        LATIN: "caf\xe9 = 'latin'  # \xe9t\xe9\nname = 'plain'\n".encode("latin-1"),
        EMPTY: b"",
        NO_EOL: b"class Tail:\n    pass  # no newline at the end",
        "tests/tool_parsers/test_alpha.py": b"def test_alpha():\n    assert extract_tool_calls\n",
    },
    "v0.2.0": {
        ALPHA: None,
        ALPHA_MOVED: ALPHA_TEXT.encode(),
        BETA: BETA_V2.encode(),
        BINARY: b"MAGIC\x00\x03 other payload caf\xe9\n",  # a byte that is not UTF-8: found as git grep finds it
    },
    "v0.3.0": {
        BETA: None,
        GAMMA: GAMMA_TEXT.encode(),
        NO_EOL: b"class Tail:\n    pass  # no newline at the end\n",
    },
}
TAGS = list(HISTORY)
# in scope, so stored: the parsed packages, and the recorded templates and tests
STORED_SPECS = [
    "vllm/tool_parsers/*.py",
    "vllm/reasoning/*.py",
    "vllm/parser/*.py",
    "tests/tool_parsers/test_*.py",
]


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    root = tmp_path_factory.mktemp("code")
    repo = make_repo(root / "repo", HISTORY)
    db = root / "code.db"
    build_tags(repo, db, "v0.1.0..")
    return repo, db


def git_bytes(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LC_ALL": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1", "HOME": os.devnull}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env=env)


# -- storage ----------------------------------------------------------------------------------------------


def test_every_parsed_blob_is_stored_once_and_reads_back_as_git_has_it(fixture):
    from indexer.store import code
    from indexer.store.database import connect

    repo, db = fixture
    conn = connect(db, create=False, readonly=True).conn
    for tag in TAGS:
        for blob_id, path in rows(
            db, "select blob_id, file from version_files where version = ? and file like 'vllm/%'", [tag]
        ):
            data = git_bytes(repo, "cat-file", "blob", blob_id).stdout
            c = code.load(conn, blob_id)
            if path == BINARY:
                assert c.kind == "binary" and c.lines == [] and code.read_bytes(conn, blob_id) == data
                continue
            assert c.kind == ("non-utf8" if path == LATIN else "text"), path
            assert code.read_text(conn, blob_id) == data.decode("utf-8", "replace"), (tag, path)
            assert c.lines == data.decode("utf-8", "replace").split("\n")[: len(c.lines)]
            assert c.final_newline == data.endswith(b"\n")
    # one row per blob, however many versions and paths hold it; templates and tests too (issue 27)
    assert (
        rows(db, "select count(*), count(distinct blob_id) from code_texts")[0]
        == rows(db, "select count(distinct blob_id), count(distinct blob_id) from version_files")[0]
    )
    assert rows(
        db,
        "select count(distinct t.blob_id) from code_texts t join version_files f on f.blob_id = t.blob_id"
        " where f.file like 'tests/%'",
    ) == [(1,)]
    # each distinct line once
    lines = [s for (t,) in rows(db, "select text from code_lines order by first") for s in t.split("\n")]
    assert len(lines) == len(set(lines)) == rows(db, "select sum(count) from code_lines")[0][0]


def test_a_build_reuses_stored_code_and_an_older_database_gets_its_code_on_the_next_build(tmp_path):
    import sqlite3

    repo = make_repo(tmp_path / "repo", HISTORY)
    db = tmp_path / "old.db"
    build_tags(repo, db, "v0.1.0,v0.2.0")
    before = rows(db, "select count(*) from code_texts")[0][0]
    build_tags(repo, db, "v0.3.0")  # only gamma and the changed file are new
    assert rows(db, "select count(*) from code_texts")[0][0] == before + 2
    # make it look like a database of the schema before the code tables: no code, an older extractor
    from indexer.store.database import SCHEMA_VERSION

    conn = sqlite3.connect(db)
    conn.executescript(
        "drop table code_texts; drop table code_lines; drop table code_postings;"
        f"update meta set value = '{SCHEMA_VERSION - 1}' where key = 'schema_version';"
        "update versions set extractor = '2:000000000000'; update blobs set extractor = '2:000000000000';"
        "update units set extractor = '2:000000000000';"
    )
    conn.close()
    out = tpindex("show", f"{GAMMA}:1", "--db", db, ok=False).output  # readers refuse the older schema
    assert "older tpindex" in out and "tpindex build" in out, out
    stats = build_tags(repo, db, "v0.1.0..")
    assert len(stats.versions_reindexed) == 3
    assert tpindex("show", f"{GAMMA}:1", "--db", db).output.strip() == "1  class GammaParser:"


# -- grep = git grep -n -E --------------------------------------------------------------------------------


def git_grep(repo: Path, pattern: str, flags: list[str], tags: list[str]) -> set[tuple]:
    """(tag, path, line, text) for each matching line, (tag, path, None, None) for a matching binary file."""
    out = git_bytes(repo, "grep", "-n", "-E", *flags, "-e", pattern, *tags, "--", *STORED_SPECS)
    assert out.returncode in (0, 1), out.stderr.decode()
    found = set()
    for raw in out.stdout.split(b"\n"):
        if not raw:
            continue
        if raw.startswith(b"Binary file ") and raw.endswith(b" matches"):
            tag, _, path = raw[len(b"Binary file ") : -len(b" matches")].decode().partition(":")
            found.add((tag, path, None, None))
            continue
        tag, path, line, text = raw.split(b":", 3)
        found.add((tag.decode(), path.decode(), int(line), text.decode("utf-8", "replace")))
    return {f for f in found if not phantom(repo, *f)}


def phantom(repo: Path, tag: str, path: str, line: int | None, text: str | None) -> bool:
    """git grep's phantom line: for a pattern that matches an empty line (^$), in a file ending with a
    newline whose last line does not match, git grep also reports an empty line N+1 past the end (its
    look-ahead finds the empty match after the final newline). There is no such line; tpindex does not
    report it, and the comparison leaves it out."""
    if line is None:
        return False
    data = git_bytes(repo, "cat-file", "blob", f"{tag}:{path}").stdout
    count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if line <= count:
        return False
    assert line == count + 1 and text == "" and data.endswith(b"\n"), (tag, path, line, text)
    return True


def ours(db: Path, pattern: str, flags: list[str], *extra: str) -> set[tuple]:
    r = tpindex("grep", "--db", db, "--format", "json", *flags, *extra, "--", pattern, ok=False)
    assert r.exit_code in (0, 1), r.output
    found = set()
    for row in json.loads(r.output):
        for v in row["versions"]:
            found.add((v, row["path"], row["line"], row["text"]))
    assert (r.exit_code == 0) == bool(found)
    return found


PATTERNS = [
    ("extract_tool_calls", []),  # a literal, in text and in a binary file
    ("def \\w+_streaming", []),
    ("EXTRACT_tool_CALLS", ["-i"]),
    ("^class ", []),
    ("\\)$", []),
    ("^$", []),
    ("^", []),  # anchors; every line
    ("a\\.b\\(c\\)\\[0\\] \\* 2 \\+ y\\?", []),  # escaped metacharacters
    ("a.b(c)[0] * 2 + y?", ["-F"]),  # the same, fixed
    ("$HOME (a|b)*", ["-F"]),
    ("^caret", ["-F"]),
    ("\\$HOME", []),
    ("\\^caret", []),
    ("(a|b)* \\[x\\] \\{2\\}", []),
    ("café", []),
    ("CAFÉ", ["-i"]),
    ("caf\\w", []),
    ("caf[[:alpha:]]", []),
    ("[[:upper:]]{4}", []),
    ("naïve|東京", []),
    ("✓", []),
    ("Σ", ["-i"]),
    ("σίσυφος", ["-i"]),
    ("^.t", []),
    ("latin", []),
    ("caf.", []),  # the Latin-1 file: an invalid byte is no character
    ("caf\udce9", []),
    ("\udce9t\udce9", ["-F"]),  # ... but the byte itself in the pattern matches it
    ("✓ .$", []),
    ("\ufffd", []),
    ("\\W$", []),  # ... but a real U+FFFD is one
    ("ı|İ", []),
    ("istanbul", ["-i"]),
    ("ILIK", ["-i"]),
    ("(foo|bar)baz", []),
    ("(ab)\\1", []),
    ("a{2}b", []),
    ("a{,1}b{1,}", []),
    ("a**b", []),
    ("o+?_", []),
    ("[\\w]", []),
    ("[]x]", []),
    ("[^[:print:]]", []),
    ("[[:space:]]$", []),
    ("\\s+\\S", []),
    ("\\W\\w", []),
    ("\\<return\\>", []),
    ("delta\\b", []),
    ("\\Bdelta", []),
    ("streaming\\>", []),
    ("\\\\\\\\", []),
    ("\\\\n", ["-F"]),
    ("\r", ["-F"]),
    ("[[:cntrl:]]", []),
    ("MAGIC", []),
    ("payload", ["-i"]),  # binary files only
    ("no newline at the end$", []),
    ("pass", ["-i", "-F"]),
    ("required_and_named", ["-F", "-i"]),
    ("(HACK|FIXME|TODO)", []),
    ("(hack|todo)", ["-i"]),  # broad: many lines in many files
    ("x(HACK|FIXME)+|\\<(tool|None)\\>", []),
    ("(İstanbul|ılık)", ["-i"]),
    ("(ab|cd)\\1|^$", []),
    ("this matches nothing at all", []),  # an empty result
    ("a)", []),
    ("", []),
]


@pytest.mark.parametrize(("pattern", "flags"), PATTERNS, ids=[f"{p!r}{''.join(f)}" for p, f in PATTERNS])
def test_grep_equals_git_grep(fixture, pattern, flags):
    repo, db = fixture
    expected = git_grep(repo, pattern, flags, TAGS)
    assert ours(db, pattern, flags) == expected


@pytest.mark.parametrize("arrays", [False, True])
def test_places_read_from_the_index_or_from_the_arrays_give_the_lines_git_grep_finds(
    fixture, monkeypatch, arrays
):
    """code.holding reads each matched line's places from code_postings, and turns to the blobs' arrays when
    the index gives more places than the blobs to search hold lines / LINES_PER_PLACE (weighed once
    CHECK_PLACES places are read): either way the lines git grep finds, for every version or some."""
    from indexer.store import code

    repo, db = fixture
    if arrays:  # weighed at the first place; any second place turns to the arrays
        monkeypatch.setattr(code, "CHECK_PLACES", 0)
        monkeypatch.setattr(code, "LINES_PER_PLACE", 1 << 40)
    for pattern, flags in (
        ("extract_tool_calls", []),
        ("^class ", []),
        ("(HACK|FIXME|TODO)", []),
        ("^", []),
        ("^$", []),
    ):
        assert ours(db, pattern, flags) == git_grep(repo, pattern, flags, TAGS)
        one = {f for f in git_grep(repo, pattern, flags, ["v0.2.0"])}
        assert ours(db, pattern, flags, "--at", "v0.2.0") == one


def test_the_index_holds_every_line_of_every_blob_at_its_place(fixture):
    """code_postings: each text blob's document is its line ids in order, so that every line is found at its
    line number (the crash tests compare the whole index with the arrays the same way)."""
    import sqlite3

    from indexer.store import code

    _, db = fixture
    conn = sqlite3.connect(db)
    try:
        conn.execute("create virtual table temp.v using fts5vocab(main, code_postings, 'instance')")
        places = {
            (doc, off + 1, int(t, 16)) for t, doc, off in conn.execute("select term, doc, offset from temp.v")
        }
        stored = {
            (row, n, x)
            for row, packed in conn.execute("select id, lines from code_texts where lines is not null")
            for n, x in enumerate(code.unpack_ids(packed), 1)
        }
    finally:
        conn.close()
    assert places == stored and len(stored) > 30


def test_a_build_writing_much_of_the_index_merges_it_into_one_segment(tmp_path, monkeypatch):
    """code.optimize runs after a build that wrote 1/OPTIMIZE_SHARE or more of code_postings' documents (a first
    build), not after one adding a few; the index answers the same either way."""
    from indexer.store import code

    repo = make_repo(tmp_path / "repo", HISTORY)
    db = tmp_path / "merged.db"
    calls = []
    real = code.optimize
    monkeypatch.setattr(code, "optimize", lambda conn: calls.append(1) or real(conn))
    build_tags(repo, db, "v0.1.0,v0.2.0")
    assert calls == [1]
    monkeypatch.setattr(code, "OPTIMIZE_SHARE", 1)  # only a build writing every document: not this one
    build_tags(repo, db, "v0.3.0")
    assert calls == [1]
    for pattern, flags in (("extract_tool_calls", []), ("^class ", []), ("(HACK|FIXME|TODO)", [])):
        assert ours(db, pattern, flags) == git_grep(repo, pattern, flags, TAGS)


def test_a_database_of_schema_11_is_refused_by_readers_and_migrated_by_a_build_without_reindexing(tmp_path):
    """Schema 11 indexed blocks of 4 line ids (code_index, meta code_block_shift), not the places of each line:
    a reader says to run a build; the build drops that index and fills code_postings from the stored arrays,
    in the migration's transaction, re-indexing no version; grep then finds what git grep finds."""
    from indexer.store.database import SCHEMA_VERSION

    repo = make_repo(tmp_path / "repo", HISTORY)
    db = tmp_path / "v11.db"
    build_tags(repo, db, "v0.1.0..")
    as_schema_11(db)
    out = tpindex("grep", "extract", "--db", db, ok=False)
    assert (
        out.exit_code == 2 and "older tpindex (schema 11" in out.output and "tpindex build" in out.output
    ), out.output
    stats = build_tags(repo, db, "v0.1.0..")
    assert not stats.versions_reindexed
    assert rows(db, "select name from sqlite_master where name like 'code_index%'") == []
    assert rows(db, "select value from meta where key in ('code_block_shift', 'schema_version')") == [
        (str(SCHEMA_VERSION),)
    ]
    for pattern, flags in (("extract_tool_calls", []), ("(HACK|FIXME|TODO)", []), ("^$", [])):
        assert ours(db, pattern, flags) == git_grep(repo, pattern, flags, TAGS)


@pytest.mark.parametrize(
    ("options", "tags", "paths"),
    [
        (["--at", "v0.2.0"], ["v0.2.0"], STORED_SPECS),
        (["--tags", "v0.2.0.."], ["v0.2.0", "v0.3.0"], STORED_SPECS),
        (["--tags", "v0.1.0,v0.3.0", "--path", "vllm/tool_parsers"], ["v0.1.0", "v0.3.0"], [P]),
        (["--path", "*beta*", "--path", "vllm/parser/*.py"], TAGS, ["*beta*", "vllm/parser/*.py"]),
    ],
)
def test_grep_versions_and_paths_as_git_grep_tags_and_pathspecs(fixture, options, tags, paths):
    repo, db = fixture
    for pattern in ("extract", "^class", "MAGIC", "return"):
        out = git_bytes(repo, "grep", "-n", "-E", "-e", pattern, *tags, "--", *paths)
        expected = {
            tuple(x.split(":", 3)[:3])
            for x in out.stdout.decode("utf-8", "replace").splitlines()
            if not x.startswith("Binary file")
        }
        expected |= {
            (x[12:-8].split(":", 1)[0], x[12:-8].split(":", 1)[1], None)
            for x in out.stdout.decode().splitlines()
            if x.startswith("Binary file")
        }
        got = {(v, p, str(n) if n else None) for v, p, n, _ in ours(db, pattern, [], *options)}
        assert got == expected, (pattern, options)


def test_grep_collapses_versions_into_ranges_and_prints_each_line_once(fixture):
    repo, db = fixture
    r = tpindex("grep", "extract_tool_calls_streaming", "--db", db, "--color", "never")
    lines = r.output.splitlines()
    # the same text at the same path and line in several versions is one line; a moved file is another path
    assert lines.count(f"v0.1.0           {ALPHA}:8:    def extract_tool_calls_streaming(self, delta):") == 1
    assert f"v0.2.0 - v0.3.0  {ALPHA_MOVED}:8:    def extract_tool_calls_streaming(self, delta):" in lines
    assert f"v0.1.0           {BETA}:4:    def extract_tool_calls_streaming(self, delta):" in lines
    assert f"v0.2.0           {BETA}:8:    def extract_tool_calls_streaming(self, delta):" in lines
    assert (
        "v0.1.0           Binary file vllm/tool_parsers/blob_tool_parser.py matches" not in lines
    )  # streaming: text only
    rows_ = json.loads(tpindex("grep", "MAGIC", "--db", db, "--format", "json").output)
    assert rows_ == [
        {
            "path": BINARY,
            "line": None,
            "text": None,
            "versions": ["v0.1.0", "v0.2.0", "v0.3.0"],
            "binary": True,
        }
    ]
    text = tpindex("grep", "MAGIC", "--db", db).output
    assert text.strip() == f"v0.1.0 - v0.3.0  Binary file {BINARY} matches"
    coloured = tpindex("grep", "tool_choice", "--db", db, "--color", "always").output
    assert "\x1b[" in coloured and "tool_choice" in coloured


def test_grep_refuses_what_it_would_match_differently_and_reports_no_match(fixture):
    _, db = fixture
    for pattern, says in [
        ("\\d+", "\\d, which ERE does not define"),
        ("[[=a=]]", "equivalence classes"),
        ("a{2", "interval"),
        ("*a", "nothing to repeat"),
        ("(a", "unmatched ("),
        ("[à-é]", "non-ASCII"),
        ("\\1(a)", "back-reference"),
        ("x\\`", "buffer anchor"),
        ("[[:word:]]", "unknown character class"),
        ("a\\", "trailing backslash"),
    ]:
        r = tpindex("grep", "--db", db, "--", pattern, ok=False)
        assert r.exit_code == 2 and says in r.output and "Hint:" in r.output, (pattern, r.output)
        assert "Traceback" not in r.output
    r = tpindex("grep", "this matches nothing", "--db", db, ok=False)
    assert r.exit_code == 1 and "no match in 3 versions" in r.output
    r = tpindex("grep", "x", "--at", "v9.9.9", "--db", db, ok=False)
    assert r.exit_code == 2 and "not indexed" in r.output
    r = tpindex("grep", "x", "--at", "v0.1.0", "--tags", "v0.2.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "use one of them" in r.output


def test_case_folding_prefilter_never_drops_a_line_python_would_match():
    """Under -i the literal prefilter searches casefolded text: every character Python's IGNORECASE
    matches to an ASCII letter must casefold to that letter (or change length, which turns the prefilter
    off for the page)."""
    import re

    for letter in "abcdefghjklmnopqrstuvwxyz":  # i and I are translated to [iI] without IGNORECASE
        rx = re.compile(letter, re.IGNORECASE)
        for cp in range(0x110000):
            ch = chr(cp)
            if rx.fullmatch(ch):
                folded = ch.casefold()
                assert folded == letter or len(folded) != 1, (letter, hex(cp))


# -- show -------------------------------------------------------------------------------------------------


def test_show_prints_a_file_or_a_span_with_line_numbers(fixture):
    _, db = fixture
    out = tpindex("show", GAMMA, "--at", "v0.3.0", "--db", db).output
    assert out == "".join(f"{n}  {s}\n" for n, s in enumerate(GAMMA_TEXT.splitlines(), 1))
    assert tpindex("show", f"{GAMMA}:3", "--db", db).output == "3          # HACK: tool_choice=required\n"
    out = tpindex("show", f"{BETA}:8-9", "--at", "v0.2.0", "--db", db).output
    assert out == "8      def extract_tool_calls_streaming(self, delta):\n9          return None\n"
    out = tpindex("show", f"{BETA}:9-", "--at", "v0.2.0", "--db", db).output
    assert out == "9          return None\n"
    j = json.loads(
        tpindex("show", f"{ALPHA_MOVED}:1-2", "--at", "v0.2.0", "--format", "json", "--db", db).output
    )
    assert j["lines"] == [{"line": 1, "text": ALPHA_TEXT.splitlines()[0]}, {"line": 2, "text": "import re"}]
    assert j["line_count"] == 13 and j["kind"] == "text" and j["version"] == "v0.2.0"
    # non-UTF-8 bytes print as U+FFFD; binary files are named, not printed; an empty file prints nothing
    assert tpindex("show", LATIN, "--at", "v0.1.0", "--db", db).output.startswith("1  caf\ufffd = 'latin'")
    size = len(HISTORY["v0.2.0"][BINARY])
    assert f"binary file, {size} bytes" in tpindex("show", BINARY, "--at", "v0.2.0", "--db", db).output
    assert tpindex("show", EMPTY, "--db", db).output == ""
    coloured = tpindex("show", f"{GAMMA}:1", "--db", db, "--color", "always").output
    assert "\x1b[" in coloured and "GammaParser" in coloured


def test_show_errors_say_where_the_path_is_and_what_is_close(fixture):
    _, db = fixture
    r = tpindex("show", BETA, "--at", "v0.3.0", "--db", db, ok=False)
    assert r.exit_code == 2 and f"{BETA} is not in v0.3.0; it is in v0.1.0 - v0.2.0" in r.output
    assert "--at v0.2.0" in r.output
    r = tpindex("show", f"{P}/alpha_tool_parsr.py", "--at", "v0.1.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "in no indexed version" in r.output and f"did you mean {ALPHA}" in r.output
    r = tpindex("show", f"{GAMMA}:99", "--db", db, ok=False)
    assert r.exit_code == 2 and "line 99 is past the end" in r.output and "(4 lines)" in r.output
    r = tpindex("show", f"{GAMMA}:3-2", "--db", db, ok=False)
    assert r.exit_code == 2 and "not a range" in r.output
    r = tpindex("show", "tests/tool_parsers/test_alpha.py:2", "--at", "v0.1.0", "--db", db)  # stored too
    assert r.output == "2      assert extract_tool_calls\n"
    r = tpindex("show", GAMMA, "--at", "v0.9.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "not indexed" in r.output


# -- diff --code ------------------------------------------------------------------------------------------


def apply(old: list[str], hunks: list[dict]) -> list[str]:
    """Apply unified-diff hunks to lines (a check that the hunks say exactly what changed)."""
    out, at = [], 0
    for h in hunks:
        start = h["old_start"] - 1 if h["old_lines"] else h["old_start"]
        out += old[at:start]
        at = start
        for line in h["lines"]:
            if line.startswith("\\"):
                continue
            if line[0] in " -":
                assert old[at] == line[1:]
                at += 1
            if line[0] in " +":
                out.append(line[1:])
    return out + old[at:]


def test_diff_code_gives_hunks_that_turn_one_version_into_the_other(fixture):
    _, db = fixture
    r = tpindex("diff", "v0.1.0", "v0.2.0", "--code", BETA, "--format", "json", "--db", db, ok=False)
    assert r.exit_code == 1
    d = json.loads(r.output)
    assert d["status"] == "modified" and d["path_a"] == d["path_b"] == BETA
    assert apply(BETA_V1.splitlines(), d["hunks"]) == BETA_V2.splitlines()
    h = d["hunks"][0]
    assert set(h) == {"old_start", "old_lines", "new_start", "new_lines", "lines"}
    text = tpindex("diff", "v0.1.0", "v0.2.0", "--code", BETA, "--db", db, ok=False).output
    assert text.startswith(f"--- a/{BETA}\t(v0.1.0)\n+++ b/{BETA}\t(v0.2.0)\n@@ -1,5 +1,9 @@\n")
    assert "-from vllm.tool_parsers.alpha_tool_parser import AlphaToolParser\n" in text
    assert "+# FIXME: inserted lines move the ones below\n" in text


def test_diff_code_of_added_deleted_unchanged_binary_and_final_newline(fixture):
    _, db = fixture
    d = json.loads(
        tpindex("diff", "v0.2.0", "v0.3.0", "--code", GAMMA, "--format", "json", "--db", db, ok=False).output
    )
    assert d["status"] == "added" and d["path_a"] is None
    assert d["hunks"] == [
        {
            "old_start": 0,
            "old_lines": 0,
            "new_start": 1,
            "new_lines": 4,
            "lines": ["+" + s for s in GAMMA_TEXT.splitlines()],
        }
    ]
    out = tpindex("diff", "v0.2.0", "v0.3.0", "--code", BETA, "--db", db, ok=False).output
    assert out.startswith(f"--- a/{BETA}\t(v0.2.0)\n+++ /dev/null\t(v0.3.0)\n@@ -1,9 +0,0 @@\n")
    r = tpindex("diff", "v0.1.0", "v0.3.0", "--code", LATIN, "--db", db)
    assert r.exit_code == 0 and r.output.strip() == f"no change to {LATIN} from v0.1.0 to v0.3.0"
    out = tpindex("diff", "v0.1.0", "v0.2.0", "--code", BINARY, "--db", db, ok=False).output
    assert out.strip() == f"Binary files a/{BINARY} (v0.1.0) and b/{BINARY} (v0.2.0) differ"
    d = json.loads(
        tpindex("diff", "v0.2.0", "v0.3.0", "--code", NO_EOL, "--format", "json", "--db", db, ok=False).output
    )
    assert d["hunks"][0]["lines"] == [
        " class Tail:",
        "-    pass  # no newline at the end",
        "\\ No newline at end of file",
        "+    pass  # no newline at the end",
    ]
    r = tpindex("diff", "v0.1.0", "v0.2.0", "--code", "vllm/nowhere.py", "--db", db, ok=False)
    assert r.exit_code == 2 and "in no indexed version" in r.output
    md = tpindex(
        "diff", "v0.2.0", "v0.3.0", "--code", GAMMA, "--format", "markdown", "--db", db, ok=False
    ).output
    assert "```diff\n--- /dev/null" in md


def test_a_copied_database_answers_without_the_repository(tmp_path):
    repo = make_repo(tmp_path / "repo", HISTORY)
    db = tmp_path / "built.db"
    build_tags(repo, db, "v0.1.0..")
    copy = tmp_path / "elsewhere" / "copy.db"
    copy.parent.mkdir()
    shutil.copyfile(db, copy)
    shutil.rmtree(repo)
    db.unlink()
    assert tpindex("show", f"{GAMMA}:1", "--db", copy).output == "1  class GammaParser:\n"
    assert "v0.2.0 - v0.3.0" in tpindex("grep", "class Alpha", "--db", copy).output
    assert tpindex("diff", "v0.1.0", "v0.2.0", "--code", BETA, "--db", copy, ok=False).exit_code == 1


def test_check_finds_parsed_files_whose_code_is_missing(fixture, tmp_path):
    import sqlite3

    _, db = fixture
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    assert tpindex("check", "--db", copy).exit_code == 0
    conn = sqlite3.connect(copy)
    conn.execute(
        "delete from code_texts where blob_id = (select u.blob_id from units u where u.path = ? limit 1)",
        [GAMMA],
    )
    conn.commit()
    conn.close()
    r = tpindex("check", "--db", copy, ok=False)
    assert r.exit_code == 1 and "have no stored code" in r.output and GAMMA in r.output


def test_an_alternation_of_texts_gives_the_prefilter_its_texts():
    """A pattern with no one required text but alternatives that each require one: every matching line holds
    one of them, and only the lines holding one are matched (grep._scan); an alternative requiring no text
    (a single character, an empty one) leaves the prefilter out."""
    from indexer.answers.ere import translate

    assert translate("(HACK|FIXME|TODO)").any_of == ["FIXME", "HACK", "TODO"]
    assert translate("x(HACK|FIXME)+").any_of == ["FIXME", "HACK"]
    assert translate("(Hack|todo)", icase=True).any_of == ["hack", "todo"]
    for pattern in ("HACK|x", "(HACK|FIXME)*", "(HACK|)", "(a|bc)d"):
        assert translate(pattern).any_of is None, pattern
    assert translate("(foo|bar)baz").literal == "baz"


@pytest.mark.parametrize("xdg", [None, "", "/tmp/xdg-cache", "relative/cache"])
def test_the_character_classes_are_cached_where_platformdirs_puts_tpindex_cache(monkeypatch, xdg):
    """core.cachedir computes platformdirs' user_cache_dir("tpindex") on Linux without importing platformdirs
    (a third of the start-up of a search with \\w or a [[:class:]]): the same directory."""
    import sys

    from platformdirs import user_cache_dir

    from indexer.core.cachedir import cache_home as cache_dir

    if sys.platform != "linux":
        pytest.skip("the rule is computed on Linux; elsewhere platformdirs itself answers")
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache_dir() == Path(user_cache_dir("tpindex"))


@pytest.mark.parametrize("args", [["extract_tool_calls"], ["def \\w+_streaming\\b"], ["-i", "CAFÉ"]])
def test_grep_imports_only_what_a_search_over_every_version_needs(fixture, tmp_path, args):
    """`grep` over every version as a whole process (issue 30: <= 0.2 s): no version specs (packaging), no
    platformdirs (a character class's cache is found without it on Linux), nothing for terminals (shutil,
    textwrap) when it writes to a pipe."""
    import sys

    _, db = fixture
    r, imported = imported_modules(["grep", *args, "--db", str(db)], tmp_path)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    modules = set(imported)
    assert "indexer.answers.grep" in modules
    lazy = {"packaging", "shlex", "shutil", "textwrap"} | (
        {"platformdirs"} if sys.platform == "linux" else set()
    )
    assert not {m.split(".")[0] for m in modules} & lazy


def test_ignore_case_finds_the_letters_python_and_git_fold_to_k_and_s(tmp_path):
    """Under -i the Kelvin sign matches k and the long s matches s (Python and the C library agree): a page
    holding either is not prefiltered by its ASCII-lowercased bytes for a text with k or s; a text without
    them is (grep._needles)."""
    history = {
        "v0.1.0": {f"{P}/folds_tool_parser.py": "mar\u212aer here\nclas\u017f name\nplain marker\nclass\n"}
    }
    repo = make_repo(tmp_path / "repo", history)
    db = tmp_path / "folds.db"
    build_tags(repo, db, "v0.1.0")
    for pattern in ("marker", "class", "plain", "ker h"):
        found = ours(db, pattern, ["-i"])
        assert found == git_grep(repo, pattern, ["-i"], ["v0.1.0"]) and found, pattern
