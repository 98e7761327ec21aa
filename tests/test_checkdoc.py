"""`tpindex check-doc` (issue 17): every claim kind on the fixture repository of test_where (a file moved by
content, a module moved with edits, a function moved between files, a name removed, a name added), with
claims that must stay `unchecked`; the formats, the exit status, and the browser page."""

from __future__ import annotations

import json
import re
import textwrap

import pytest
from fixtures.helpers import build_tags, tpindex

DOC = textwrap.dedent("""\
    # Operator notes (fixture)

    The registry is `_TOOL_PARSERS_TO_REGISTER` in `vllm/tool_parsers/__init__.py`.
    Flags come from `make_arg_parser` in `vllm/entrypoints/launchers/cli_args.py`.
    `setup_env` is defined in `vllm/entrypoints/serve/api_utils.py`.
    Read `docs/guide.md` and `AGENTS.md` first.
    Run `grep -n parse_delta vllm/entrypoints/chat/serving.py` to find the streaming call.
    Parsers live in `vllm/tool_parsers/<name>_tool_parser.py`, templates in `examples/tool_chat_template_*.jinja`.
    The registry module is `vllm/tool_parsers/registry.py`; hooks go in `vllm/plugins/*_hook.py`.

    | name | file | class |
    |---|---|---|
    | `alpha` | `vllm/tool_parsers/alpha_tool_parser.py` | `AlphaToolParser` |
    | `beta` | `vllm/tool_parsers/beta_tool_parser.py` | `BetaToolParser` |
    | `gamma` (v0.30.0+) | `vllm/tool_parsers/gamma_tool_parser.py` | `GammaToolParser` |
    | `alpha_too` | `vllm/tool_parsers/alpha_tool_parser.py` | `BetaToolParser` |

    Use `--tool-call-parser alpha` or `--tool-call-parser alpah`.
    `alpha_too` is the same class as `alpha`. `gamma` is an alias of `alpha`.
    `gamma` is new in v0.31.0. `beta` was removed at v0.33.0. `alpha` was removed at v0.32.0.
    `docs/guide.md` moved to `docs/features/guide.md` at v0.32.0.
    There are 3 tool parser names at v0.30.0, 4 tool parser names at v0.31.0 and 5 tool parser names at v0.32.0.
    Right now 4 tool parser names are registered.
    `ling9` has been around since v0.29.0.
    Everything here was checked before v0.31.0 shipped.
    The registry has 2 aliases at v0.30.0.
    Parsers used to live in `vllm/entrypoints/openai/tool_parsers/`.
    Try `grep -rnE 'def \\w+_delta' vllm/entrypoints/` for the rest.
    See `vllm/entrypoints/chat/serving.py` and `vllm/tool_parsers/__init__.py` about `ChatServing`.
    The `Unrelated` helper is described next to `vllm/handlers.py`.
    """)

# (line, kind, claim text fragment) -> status at v0.31.0 and at v0.33.0, and a fragment of the finding
EXPECTED = [
    (3, "symbol", "_TOOL_PARSERS_TO_REGISTER", "ok", "ok", "defined at vllm/tool_parsers/__init__.py:3"),
    (3, "path", "vllm/tool_parsers/__init__.py", "ok", "ok", "exists"),
    (
        4,
        "symbol",
        "make_arg_parser",
        "ok",
        "stale",
        "moved to vllm/entrypoints/common/cli_args.py at v0.33.0 (definitions: 3 of its 3",
    ),
    (
        4,
        "path",
        "vllm/entrypoints/launchers/cli_args.py",
        "ok",
        "stale",
        "moved to vllm/entrypoints/common/cli_args.py at v0.33.0",
    ),
    (
        5,
        "symbol",
        "setup_env",
        "ok",
        "stale",
        "since v0.32.0 (last at v0.31.0); at v0.33.0 defined at vllm/entrypoints/common/startup.py:4",
    ),
    (5, "path", "vllm/entrypoints/serve/api_utils.py", "ok", "ok", "exists"),
    (6, "path", "docs/guide.md", "ok", "stale", "moved to docs/features/guide.md at v0.32.0 (content)"),
    (6, "path", "AGENTS.md", "ok", "ok", "exists"),
    (7, "symbol", "grep `parse_delta`", "ok", "stale", "at v0.33.0 in vllm/entrypoints/chat/stream.py"),
    (8, "path", "<name>_tool_parser.py", "ok", "ok", "path(s) match"),
    (8, "path", "tool_chat_template_*.jinja", "ok", "ok", "1 path(s) match"),
    (9, "path", "registry.py", "wrong", "wrong", "no such path in any indexed version (v0.30.0 - v0.33.0)"),
    (9, "path", "*_hook.py", "wrong", "wrong", "matches no path in any indexed version"),
    (13, "parser", "alpha", "ok", "ok", "registered (tool, standalone"),
    (13, "path", "alpha_tool_parser.py", "ok", "ok", "exists"),
    (13, "symbol", "AlphaToolParser", "ok", "ok", "defined at"),
    (14, "parser", "beta", "ok", "stale", "removed at v0.33.0 (last at v0.32.0)"),
    (14, "path", "beta_tool_parser.py", "ok", "stale", "removed at v0.33.0 (last at v0.32.0)"),
    (14, "symbol", "BetaToolParser", "ok", "stale", "removed at v0.33.0"),
    (15, "version", "(v0.30.0+)", "wrong", "wrong", "not at v0.30.0; first at v0.31.0"),
    (15, "path", "gamma_tool_parser.py", "ok", "ok", "exists"),
    (15, "symbol", "GammaToolParser", "ok", "ok", "defined at"),
    (16, "parser", "alpha_too", "ok", "ok", "registered"),
    (16, "path", "alpha_tool_parser.py", "ok", "ok", "exists"),
    (16, "symbol", "BetaToolParser", "wrong", "wrong", "in no indexed --tree version"),
    (18, "parser", "alpha", "ok", "ok", "registered"),
    (18, "parser", "alpah", "wrong", "wrong", "no tool parser named alpah in any indexed version"),
    (19, "alias", "`alpha_too` same class as `alpha`", "ok", "ok", "both registered to AlphaToolParser"),
    (19, "alias", "`gamma` same class as `alpha`", "wrong", "wrong", "never the same class"),
    (20, "version", "new in v0.31.0", "ok", "ok", "first at v0.31.0 (absent at v0.30.0)"),
    (20, "version", "`beta` removed at v0.33.0", "ok", "ok", "removed at v0.33.0 (last at v0.32.0)"),
    (20, "version", "`alpha` removed at v0.32.0", "wrong", "wrong", "still present at v0.32.0"),
    (
        21,
        "version",
        "moved to `docs/features/guide.md` at v0.32.0",
        "ok",
        "ok",
        "moved at v0.32.0 to docs/features/guide.md (content)",
    ),
    (22, "count", "3 tool parser names at v0.30.0", "ok", "ok", "3 at v0.30.0"),
    (22, "count", "4 tool parser names at v0.31.0", "ok", "ok", "4 at v0.31.0"),
    (22, "count", "5 tool parser names at v0.32.0", "wrong", "wrong", "4 at v0.32.0, not 5"),
    (23, "count", "4 tool parser names", "ok", "stale", "3 at v0.33.0; 4 in v0.31.0 - v0.32.0"),
    (
        24,
        "version",
        "`ling9`",
        "unchecked",
        "unchecked",
        "a plain word, not clearly a symbol or a parser name",
    ),
    (25, "unreadable", "before v0.31.0", "unchecked", "unchecked", "no name or path"),
    (26, "unreadable", "2 aliases", "unchecked", "unchecked", "does not count"),
    (27, "path", "vllm/entrypoints/openai/tool_parsers/", "unchecked", "unchecked", "speaks of the past"),
    (28, "symbol", "def \\w+_delta", "unchecked", "unchecked", "regular expression"),
    (30, "symbol", "`Unrelated`", "unchecked", "unchecked", "the sentence may not pair them"),
    (30, "path", "vllm/handlers.py", "ok", "ok", "exists"),
]
# line 29 names two files and one symbol: no pairing, only the two path claims
EXPECTED[-2:-2] = [
    (29, "path", "vllm/entrypoints/chat/serving.py", "ok", "ok", "exists"),
    (29, "path", "vllm/tool_parsers/__init__.py", "ok", "ok", "exists"),
]


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    path = tmp_path_factory.mktemp("doc") / "notes.md"
    path.write_text(DOC)
    return path


def report(db, doc, *args, ok=False):
    """check-doc's JSON, which follows its schema (tpindex schema check-doc)."""
    import jsonschema

    from indexer.schemas import load

    r = tpindex("check-doc", doc, "--format", "json", *args, "--db", db, ok=ok)
    data = json.loads(r.output)
    jsonschema.Draft202012Validator(load("check-doc")).validate(data)
    return r.exit_code, data


def test_every_claim_kind_is_found_and_checked(tree_db, doc):  # noqa: F811
    code, rep = report(tree_db, doc, "--at", "v0.31.0", "--at", "v0.33.0")
    assert code == 1 and [v["version"] for v in rep["versions"]] == ["v0.31.0", "v0.33.0"]
    for vi, v in enumerate(rep["versions"]):
        got = [(r["line"], r["kind"], r["claim"], r["status"], r["message"]) for r in v["results"]]
        assert len(got) == len(EXPECTED), "\n".join(map(str, got))
        for (line, kind, claim, status, message), (eline, ekind, efrag, *estatus, emsg) in zip(
            got, EXPECTED, strict=True
        ):
            want, other = estatus[vi], estatus[1 - vi]
            assert (line, kind) == (eline, ekind) and efrag in claim, (got, (eline, ekind, efrag))
            assert status == want, (v["version"], line, claim, status, message)
            if want != "ok" or other == "ok":  # the finding given is the one of the not-ok version
                assert emsg in message, (v["version"], line, claim, message)


def test_stale_says_what_is_true_now_and_since_when(tree_db, doc):  # noqa: F811
    out = tpindex("check-doc", doc, "--at", "v0.33.0", "--db", tree_db, ok=False).output
    line = next(s for s in out.splitlines() if "path     `vllm/entrypoints/launchers/cli_args.py`:" in s)
    assert line.split()[:3] == ["4", "stale", "path"]
    assert line.endswith(
        "moved to vllm/entrypoints/common/cli_args.py at v0.33.0 (definitions: 3 of its 3 "
        "(FrontendArgs, make_arg_parser, validate_args))"
    )


def test_a_claim_in_a_row_about_later_versions_is_not_checked_before(tree_db, tmp_path):  # noqa: F811
    doc = tmp_path / "d.md"
    doc.write_text(
        "| name | file |\n|---|---|\n| `gamma` (v0.31.0+) | `vllm/tool_parsers/gamma_tool_parser.py` |\n"
    )
    _, rep = report(tree_db, doc, "--at", "v0.30.0")
    assert [(r["kind"], r["status"]) for r in rep["versions"][0]["results"]] == [
        ("version", "ok"),
        ("path", "unchecked"),
    ]


def test_a_name_a_plugin_registers_is_not_called_wrong(tree_db, tmp_path):  # noqa: F811
    doc = tmp_path / "plugin.md"
    doc.write_text(
        "```sh\nvllm serve m --tool-parser-plugin ./my_parser.py \\\n  --tool-call-parser mine\n```\n"
    )
    code, rep = report(tree_db, doc)
    assert code == 0 and [(r["status"], r["claim"]) for r in rep["versions"][0]["results"]] == [
        ("unchecked", "`mine` (tool parser)")
    ]
    assert "plugin" in rep["versions"][0]["results"][0]["message"]


def test_exit_status_and_formats(tree_db, doc, tmp_path):  # noqa: F811
    good = tmp_path / "good.md"
    good.write_text(
        "The registry is in `vllm/tool_parsers/__init__.py`; start with `--tool-call-parser alpha`.\n"
    )
    r = tpindex("check-doc", good, "--db", tree_db)
    assert r.exit_code == 0 and r.output.startswith(
        f"{good} at v0.33.0: 2 claim(s): 2 ok, 0 stale, 0 too-new, 0 wrong"
    )
    r = tpindex(
        "check-doc", doc, "--format", "markdown", "--at", "v0.30.0..v0.31.0", "--db", tree_db, ok=False
    )
    assert r.exit_code == 1
    assert r.output.count("| line | status | kind | claim | finding |") == 2 and "### " in r.output
    r = tpindex("check-doc", "-", "--db", tree_db, ok=False)  # stdin, empty: nothing to check
    assert r.exit_code == 0 and "0 claim(s)" in r.output
    for args, says in (
        (["--at", "v9.9.9"], "v9.9.9 is not indexed"),
        (["--at", "v1..v2"], "selects nothing"),
    ):
        r = tpindex("check-doc", doc, *args, "--db", tree_db, ok=False)
        assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output
    r = tpindex("check-doc", tmp_path / "missing.md", "--db", tree_db, ok=False)
    assert r.exit_code == 2 and "cannot read" in r.output


def test_versions_without_the_tree_leave_path_and_symbol_claims_unchecked(where_repo, doc, tmp_path):  # noqa: F811
    db = tmp_path / "plain.db"
    build_tags(where_repo, db, "v0.30.0..v0.33.0")
    _, rep = report(db, doc)
    by = {(r["line"], r["kind"], r["claim"]): r for r in rep["versions"][0]["results"]}
    assert (
        by[(4, "symbol", "`make_arg_parser` in `vllm/entrypoints/launchers/cli_args.py`")]["status"]
        == "unchecked"
    )
    assert by[(6, "path", "`docs/guide.md`")]["status"] == "unchecked"
    assert by[(14, "parser", "`beta`")]["status"] == "stale"  # the parser map needs no tree
    assert by[(3, "path", "`vllm/tool_parsers/__init__.py`")]["status"] == "ok"  # in the scope


# -- the browser page ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tree_db):  # noqa: F811
    from fixtures.serve import serve

    c = serve(tree_db)
    yield c
    c.close()


def post(client, **data):
    """The form as a browser sends it: with the CSRF token of the page and its cookie."""
    page = client.get("/-/check-doc")
    assert '<textarea name="doc"' in page.text
    token = re.search(r'name="csrftoken" value="([^"]+)"', page.text).group(1)
    return client.post("/-/check-doc", data={"csrftoken": token, **data}, cookies=page.cookies)


def test_page_shows_the_same_report_with_links_to_evidence(client, tree_db, doc):  # noqa: F811
    r = post(client, doc=DOC, at="v0.33.0")
    assert r.status_code == 200, r.text[:500]
    _, rep = report(tree_db, doc, "--at", "v0.33.0")
    statuses = re.findall(r'<tr data-status="(\w+)" data-kind="(\w+)">', r.text)
    assert statuses == [(x["status"], x["kind"]) for x in rep["versions"][0]["results"]]
    assert "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/entrypoints/common/startup.py#L4" in r.text
    assert "/tpindex/which?name=alpha&amp;version=v0.33.0" in r.text
    assert "/-/where?db=tpindex&amp;q=vllm%2Fentrypoints%2Flaunchers%2Fcli_args.py" in r.text


def test_page_escapes_everything_and_caps_the_size(client):
    r = client.get("/-/check-doc?doc=" + "%3Cscript%3Ealert(1)%3C/script%3E%20%60vllm/%3Cb%3E.py%60")
    assert r.status_code == 200 and "<script>alert" not in r.text and "&lt;script&gt;" in r.text
    r = post(client, doc="`vllm/x.py` " * 20_000)
    assert r.status_code == 200 and "larger than 200 kB" in r.text and "<h2>" not in r.text
    r = client.get("/-/check-doc?db=nope")
    assert r.status_code == 404
    r = client.get("/-/check-doc?doc=%60x%60&at=v9.9.9")
    assert "v9.9.9 is not indexed" in r.text


def test_where_page(client):
    page = client.html("/-/where?q=setup_env")
    assert "startup.py:4</span>" in page  # the page itself: test_browser_where
    assert "in no indexed version" not in client.html("/-/where?q=docs/guide.md").lower()
    assert "docs/features/guide.md</a>" in client.html("/-/where?q=docs/guide.md")


def test_links_are_path_claims_once(tree_db, tmp_path):  # noqa: F811
    doc = tmp_path / "links.md"
    doc.write_text(
        "See [`docs/guide.md`](docs/guide.md), [the flags]"
        "(https://github.com/vllm-project/vllm/blob/v0.31.0/vllm/entrypoints/launchers/cli_args.py#L8)"
        " and [the site](https://docs.vllm.ai/en/latest/).\n"
    )
    _, rep = report(tree_db, doc, "--at", "v0.31.0")
    assert [(r["claim"], r["status"]) for r in rep["versions"][0]["results"]] == [
        ("`docs/guide.md`", "ok"),
        ("`vllm/entrypoints/launchers/cli_args.py`", "ok"),
    ]


def test_counts_of_names_by_implementation_and_of_files(tree_db, tmp_path):  # noqa: F811
    doc = tmp_path / "counts.md"
    doc.write_text(
        "At v0.31.0 there are 4 standalone tool parser names and 1 unified parser names.\n\n"
        "There are 4 files in `vllm/tool_parsers/` at v0.33.0.\n"
    )
    _, rep = report(tree_db, doc)
    assert [(r["claim"], r["status"], r["message"]) for r in rep["versions"][0]["results"]] == [
        ("4 standalone tool parser names at v0.31.0", "ok", "4 at v0.31.0"),
        ("1 unified parser names at v0.31.0", "wrong", "0 at v0.31.0, not 1"),
        ("`vllm/tool_parsers/`", "ok", "a directory of 4 files"),
        ("4 files in `vllm/tool_parsers/` at v0.33.0", "ok", "4 at v0.33.0"),
    ]


@pytest.mark.parametrize(
    "fmt,name", [("text", "check_doc.txt"), ("json", "check_doc.json"), ("markdown", "check_doc.md")]
)
def test_check_doc_is_golden(tree_db, doc, fmt, name):  # noqa: F811
    from fixtures.golden import golden

    r = tpindex(
        "check-doc", doc, "--at", "v0.31.0", "--at", "v0.33.0", "--format", fmt, "--db", tree_db, ok=False
    )
    golden(name, r.output.replace(str(doc), "DOC"))
