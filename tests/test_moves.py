"""Moves followed to the end (issue 23, item 6), on a fixture repository written here: a module that moves
twice (openai/cli_args.py -> launchers/cli_args.py at v0.29.0 -> common/cli_args.py at v0.33.0, each time with
edits, found by the definitions it holds), and a module that becomes a package at the same import path
(renderers/chat_utils.py -> renderers/chat_utils/ at v0.33.0, its functions spread over the package's modules).
`where --all` gives the chain and the final location; `check-doc` gives the final path as the fix."""

from __future__ import annotations

import json
import textwrap

import pytest
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry
from fixtures.helpers import build_tags, make_repo, tpindex

TP = "vllm/tool_parsers"
OLD, MID, NEW = (
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/launchers/cli_args.py",
    "vllm/entrypoints/common/cli_args.py",
)
MODULE, PACKAGE = "vllm/renderers/chat_utils.py", "vllm/renderers/chat_utils/"


def cli_args(*extra: str) -> str:
    """A cli_args module: its classes and functions, plus `extra` functions (each move edits it)."""
    more = "".join(f"\n\ndef {name}(args):\n    return args\n" for name in extra)
    return (
        'import argparse\n\n\nclass FrontendArgs:\n    host: str = "127.0.0.1"\n\n\n'
        'def make_arg_parser(parser):\n    parser.add_argument("--tool-call-parser")\n    return parser\n\n\n'
        "def validate_args(args):\n    return args\n" + more
    )


CHAT_UTILS = """
import uuid


class ConversationMessage(dict):
    pass


def parse_chat_messages(messages):
    return [ConversationMessage(m) for m in messages]


def apply_chat_template(messages, template):
    return template.format(messages=messages)


def make_tool_call_id(prefix="call"):
    return f"{prefix}_{uuid.uuid4().hex}"
"""

PACKAGE_FILES = {
    f"{PACKAGE}__init__.py": """
from vllm.renderers.chat_utils.messages import ConversationMessage, parse_chat_messages
from vllm.renderers.chat_utils.template import apply_chat_template
from vllm.renderers.chat_utils.tool_call import make_tool_call_id
""",
    f"{PACKAGE}messages.py": """
class ConversationMessage(dict):
    pass


def parse_chat_messages(messages):
    return [ConversationMessage(m) for m in messages]
""",
    f"{PACKAGE}template.py": """
def apply_chat_template(messages, template):
    return template.format(messages=messages)
""",
    f"{PACKAGE}tool_call.py": """
import uuid


def make_tool_call_id(prefix="call"):
    return f"{prefix}_{uuid.uuid4().hex}"
""",
}

PARSER = (
    "from vllm.tool_parsers.abstract_tool_parser import ToolParser\n\n\n"
    "class AlphaToolParser(ToolParser):\n    def extract_tool_calls(self, text):\n        return text\n"
)

HISTORY = {
    "v0.28.0": {
        f"{TP}/__init__.py": lazy_registry(
            "tool",
            {"alpha": ("alpha_tool_parser", "AlphaToolParser")},
            inline=True,
            imports="ToolParserManager",
        ),
        f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
        f"{TP}/alpha_tool_parser.py": PARSER,
        OLD: cli_args(),
        MODULE: CHAT_UTILS,
    },
    "v0.29.0": {OLD: None, MID: cli_args("log_args")},
    "v0.32.0": {"docs/serving.md": "# Serving\n"},
    "v0.33.0": {MID: None, NEW: cli_args("log_args", "check_port"), MODULE: None, **PACKAGE_FILES},
}

DOC = textwrap.dedent(f"""\
    # Runbook (fixture)

    The server's flags are defined in `{OLD}`.
    Tool call ids come from `make_tool_call_id` in `{MODULE}`.
    """)


@pytest.fixture(scope="module")
def tree_db(tmp_path_factory):
    from indexer.core.scope import Scope

    repo = make_repo(tmp_path_factory.mktemp("moves") / "repo", HISTORY)
    db = tmp_path_factory.mktemp("moves-db") / "tree.db"
    build_tags(repo, db, "v0.28.0..v0.33.0", scope=Scope.named("default", tree=True), jobs=1)
    return db


def where(db, *args):
    return tpindex("where", *args, "--db", db)


def test_a_chained_move_gives_every_hop_and_the_final_location(tree_db):
    out = where(tree_db, OLD, "--all").output.splitlines()
    assert out[:2] == [OLD, "  v0.28.0              present"]
    moved = out[2]
    assert moved.startswith(f"  v0.29.0 - v0.33.0    moved at v0.29.0 to {MID} (definitions: 3 of its 3")
    assert f", then at v0.33.0 to {NEW} (definitions: " in moved and moved.endswith(f", now at {NEW}")
    data = json.loads(where(tree_db, OLD, "--all", "--format", "json").output)
    move = data["history"][-1]["moves"][0]
    assert (move["to"], move["final"], move["removed_at"]) == (MID, NEW, None)
    assert [(h["at"], h["to"], h["by"]) for h in move["then"]] == [("v0.33.0", NEW, "definitions")]


def test_at_one_version_the_chain_stops_at_that_version(tree_db):
    out = where(tree_db, OLD, "--at", "v0.32.0").output
    assert f"moved at v0.29.0 to {MID}" in out and NEW not in out
    out = where(tree_db, OLD, "--at", "v0.33.0").output
    assert f"now at {NEW}" in out


def test_a_module_that_becomes_a_package_is_a_move(tree_db):
    out = where(tree_db, MODULE, "--all").output.splitlines()
    assert out[1] == "  v0.28.0 - v0.32.0    present"
    assert out[2].startswith(
        f"  v0.33.0              moved at v0.33.0 to {PACKAGE} (package: same import path"
        " vllm.renderers.chat_utils; 4 of its 4 definitions in 3 of its modules"
    )
    assert "tool_call.py" in out[2] and "removed" not in "\n".join(out)
    data = json.loads(where(tree_db, MODULE, "--all", "--format", "json").output)
    assert data["history"][-1]["moves"][0]["by"] == "package"


def test_check_doc_gives_the_final_path_as_the_fix(tree_db, tmp_path):
    doc = tmp_path / "runbook.md"
    doc.write_text(DOC)
    r = tpindex("check-doc", doc, "--format", "json", "--db", tree_db, ok=False)
    results = json.loads(r.output)["versions"][0]["results"]
    by_claim = {(x["kind"], x["claim"].strip("`")): x for x in results}
    old = by_claim[("path", OLD)]
    assert old["status"] == "stale" and old["message"].startswith(f"moved to {NEW} (at v0.29.0 to {MID}")
    module = by_claim[("path", MODULE)]
    assert module["status"] == "stale" and module["message"].startswith(
        f"moved to {PACKAGE} at v0.33.0 (package"
    )
    symbol = [x for x in results if x["kind"] == "symbol"][0]
    assert f"moved to {PACKAGE} at v0.33.0" in symbol["message"] and "removed" not in symbol["message"]
    assert f"{PACKAGE}tool_call.py" in symbol["message"]


def test_where_json_with_chains_follows_its_schema(tree_db):
    import jsonschema

    from indexer.schemas import load

    for q in (OLD, MODULE):
        jsonschema.Draft202012Validator(load("where")).validate(
            json.loads(where(tree_db, q, "--all", "--format", "json").output)
        )
