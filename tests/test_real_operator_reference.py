"""check-doc on a realistic operator reference (tests/docs/operator_reference.md, written for this test)
against the real releases v0.30.0..v0.33.0, built from their released source archives with --tree.

Every expected status below was established by reading the releases by hand (the unpacked trees and,
for v0.31.0, `git show` of its tag): the registry dicts of vllm/tool_parsers/__init__.py and
vllm/reasoning/__init__.py (names added at v0.31.0, v0.32.0 and v0.33.0; entries sharing a module and
class), `ls` and `grep -n "^class\\|^def"` of the files named, the move of
vllm/entrypoints/launchers/cli_args.py to vllm/entrypoints/common/cli_args.py at v0.33.0 (its nine
top-level classes and functions all in the new file), cli_env_setup leaving api_utils.py for
vllm/entrypoints/common/startup.py at v0.33.0, the call of parse_delta leaving
chat_completion/serving.py for stream_processor.py at v0.33.0, `find vllm/parser -type f | wc -l`,
and the files importing a ...ParserToolAdapter / ...ParserReasoningAdapter (13 tool-parser files at
v0.31.0, 17 at v0.32.0; 33 files in all at v0.32.0). Skipped, loudly, only when the package index
cannot be reached.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network

DOC = Path(__file__).parent / "docs" / "operator_reference.md"

# (line, kind, a fragment of the claim, status at v0.32.0, status at v0.33.0, a fragment of a non-ok finding)
EXPECTED = [
    (9, "symbol", "_TOOL_PARSERS_TO_REGISTER", "ok", "ok", ""),
    (9, "path", "vllm/tool_parsers/__init__.py", "ok", "ok", ""),
    (10, "symbol", "_REASONING_PARSERS_TO_REGISTER", "ok", "ok", ""),
    (10, "path", "vllm/reasoning/__init__.py", "ok", "ok", ""),
    (11, "symbol", "ToolParserManager", "ok", "ok", ""),
    (11, "path", "abstract_tool_parser.py", "ok", "ok", ""),
    (11, "symbol", "ReasoningParserManager", "ok", "ok", ""),
    (11, "path", "abs_reasoning_parsers.py", "ok", "ok", ""),
    (
        12,
        "symbol",
        "make_arg_parser",
        "ok",
        "stale",
        "moved to vllm/entrypoints/common/cli_args.py at v0.33.0 (definitions: 9 of its 9",
    ),
    (
        12,
        "path",
        "launchers/cli_args.py",
        "ok",
        "stale",
        "moved to vllm/entrypoints/common/cli_args.py at v0.33.0",
    ),
    (13, "version", "common/cli_args.py` Since v0.33.0", "ok", "ok", ""),
    (14, "version", "moved to `vllm/entrypoints/common/cli_args.py` at v0.33.0", "ok", "ok", ""),
    (15, "path", "chat_completion/serving.py", "ok", "ok", ""),
    (
        16,
        "symbol",
        "grep `parse_delta`",
        "ok",
        "stale",
        "since v0.33.0 (last at v0.32.0); at v0.33.0 in vllm/entrypoints/openai/chat_completion/stream_processor.py",
    ),
    (17, "symbol", "make_adapters", "ok", "ok", ""),
    (17, "path", "engine/adapters.py", "ok", "ok", ""),
    (17, "path", "registered_adapters.py", "ok", "ok", ""),
    (18, "symbol", "ParserEngine", "ok", "ok", ""),
    (18, "path", "parser_engine.py", "ok", "ok", ""),
    (19, "path", "parser_manager.py", "ok", "ok", ""),
    (20, "symbol", "ResponseTemplateParser", "ok", "ok", ""),
    (20, "path", "response_template.py", "ok", "ok", ""),
    (21, "version", "unified_parser_cls", "ok", "ok", ""),
    (22, "path", "registry.py", "wrong", "wrong", "no such path in any indexed version"),
    (23, "path", "`vllm/tool_parsers/`", "unchecked", "unchecked", "speaks of the past"),
    (23, "path", "openai/tool_parsers/", "unchecked", "unchecked", "speaks of the past"),
    (27, "symbol", "cli_env_setup", "too-new", "ok", "there from v0.33.0"),
    (27, "path", "common/startup.py", "too-new", "ok", "first at v0.33.0"),
    (28, "version", "cli_env_setup` Before v0.33.0", "ok", "ok", ""),
    (28, "path", "api_utils.py", "ok", "ok", ""),
    (29, "path", "tool_calling.md", "ok", "ok", ""),
    (29, "path", "reasoning_outputs.md", "ok", "ok", ""),
    (31, "path", "<name>_tool_parser.py", "ok", "ok", ""),
    (32, "path", "tool_chat_template_*.jinja", "ok", "ok", ""),
    (32, "path", "tool_chat_template_hermes.jinja", "ok", "ok", ""),
    (33, "path", "test_<name>_tool_parser.py", "ok", "ok", ""),
    (37, "parser", "hermes", "ok", "ok", ""),
    (37, "parser", "deepseek_r1", "ok", "ok", ""),
    (38, "parser", "hermes2", "wrong", "wrong", "no tool parser named hermes2"),
    (42, "parser", "hermes", "ok", "ok", ""),
    (42, "path", "hermes_tool_parser.py", "ok", "ok", ""),
    (42, "symbol", "Hermes2ProToolParser", "ok", "ok", ""),
    (43, "alias", "`qwen3_json` same class as `hermes`", "ok", "ok", ""),
    (43, "version", "qwen3_json` (v0.32.0+)", "ok", "ok", ""),
    (43, "path", "hermes_tool_parser.py", "ok", "ok", ""),
    (43, "symbol", "Hermes2ProToolParser", "ok", "ok", ""),
    (44, "version", "plamo3` (v0.31.0+)", "wrong", "wrong", "not at v0.31.0; first at v0.32.0"),
    (44, "path", "plamo3_engine_tool_parser.py", "ok", "ok", ""),
    (44, "symbol", "Plamo3EngineToolParser", "ok", "ok", ""),
    (45, "version", "ling3` (v0.29.0+)", "unchecked", "unchecked", "no version before v0.29.0 is indexed"),
    (45, "path", "ling3_tool_parser.py", "ok", "ok", ""),
    (45, "symbol", "Ling3ToolParser", "ok", "ok", ""),
    (46, "parser", "glm47", "ok", "ok", ""),
    (46, "path", "glm47_moe_tool_parser.py", "ok", "ok", ""),
    (46, "symbol", "Glm47MoeModelToolParser", "ok", "ok", ""),
    (47, "version", "muse` (v0.33.0+)", "ok", "ok", ""),
    (47, "path", "muse_tool_parser.py", "unchecked", "ok", "speaks of v0.33.0 and later"),
    (47, "symbol", "MuseToolParser", "unchecked", "ok", "speaks of v0.33.0 and later"),
    (48, "parser", "kimi_k3", "ok", "ok", ""),
    (48, "path", "kimi_k3.py", "ok", "ok", ""),
    (48, "symbol", "KimiK3Parser", "ok", "ok", ""),
    (49, "parser", "mistral", "ok", "ok", ""),
    (49, "path", "mistral_tool_parser.py", "ok", "ok", ""),
    (49, "symbol", "Hermes2ProToolParser", "wrong", "wrong", "in no indexed --tree version"),
    (53, "parser", "deepseek_r1", "ok", "ok", ""),
    (53, "path", "deepseek_r1_reasoning_parser.py", "ok", "ok", ""),
    (54, "version", "granite_thinking_parser` since v0.31.0", "ok", "ok", ""),
    (54, "path", "granite_thinking_engine_reasoning_parser.py", "ok", "ok", ""),
    (55, "parser", "qwen3", "ok", "ok", ""),
    (55, "path", "qwen3_engine_reasoning_parser.py", "ok", "ok", ""),
    (56, "version", "step5` (v0.33.0+)", "ok", "ok", ""),
    (56, "path", "deepseek_r1_reasoning_parser.py", "unchecked", "ok", "speaks of v0.33.0 and later"),
    (60, "alias", "`glm47` same class as `glm45`", "ok", "ok", ""),
    (61, "alias", "`qwen3_xml` same class as `qwen3_coder`", "ok", "ok", ""),
    (
        62,
        "alias",
        "`mimo` same class as `qwen3_coder`",
        "stale",
        "stale",
        "the same class in v0.30.0 - v0.31.0",
    ),
    (
        63,
        "alias",
        "`musespark1x` same class as `muse`",
        "too-new",
        "ok",
        "the same class in v0.33.0, not at v0.32.0",
    ),
    (64, "alias", "`hermes` same class as `mistral`", "wrong", "wrong", "never the same class"),
    (68, "version", "hermes` since v0.31.0", "wrong", "wrong", "already at v0.30.0"),
    (69, "version", "minimax_m2` removed at v0.33.0", "wrong", "wrong", "still present at v0.33.0"),
    (70, "version", "minimax` removed at v0.25.1", "unchecked", "unchecked", "cannot confirm"),
    (71, "version", "strategies.py` gone since v0.33.0", "ok", "ok", ""),
    (75, "count", "54 tool parser names at v0.32.0", "ok", "ok", ""),
    (75, "count", "38 reasoning parser names at v0.32.0", "ok", "ok", ""),
    (76, "count", "54 tool parser names", "ok", "stale", "58 at v0.33.0; 54 in v0.32.0"),
    (77, "count", "58 tool parser names at v0.33.0", "ok", "ok", ""),
    (78, "count", "17 tool-parser files import an adapter at v0.32.0", "ok", "ok", ""),
    (78, "count", "33 files import an adapter at v0.32.0", "ok", "ok", ""),
    (
        79,
        "count",
        "12 tool-parser files import an adapter at v0.31.0",
        "wrong",
        "wrong",
        "13 at v0.31.0, not 12",
    ),
    (80, "path", "`vllm/parser/`", "ok", "ok", ""),
    (80, "path", "`vllm/parser/engine/`", "ok", "ok", ""),
    (80, "count", "43 files in `vllm/parser/` at v0.32.0", "ok", "ok", ""),
    (80, "count", "9 files in `vllm/parser/engine/`", "ok", "ok", ""),
    (81, "unreadable", "5 aliases", "unchecked", "unchecked", "does not count"),
    (86, "parser", "glm47", "ok", "ok", ""),
    (86, "parser", "glm45", "ok", "ok", ""),
    (87, "symbol", "ToolParser", "unchecked", "unchecked", "regular expression"),
    (88, "symbol", "def extract_tool_calls", "ok", "ok", ""),
]


@pytest.fixture(scope="module")
def tree_db(pypi, tmp_path_factory):  # noqa: F811
    db = tmp_path_factory.mktemp("real-tree") / "real.db"
    tpindex("build", "--from-pypi", "--tree", "--tags", "v0.30.0..v0.33.0", "--db", db, "-q")
    return db


def test_the_reference_has_at_least_30_claims_of_every_kind():
    kinds = {k for _, k, *_ in EXPECTED}
    assert len(EXPECTED) >= 30 and kinds >= {"path", "symbol", "parser", "alias", "version", "count"}
    statuses = {s for *_, a, b, _ in EXPECTED for s in (a, b)}
    assert statuses == {"ok", "stale", "too-new", "wrong", "unchecked"}


def test_check_doc_on_the_operator_reference(tree_db):
    r = tpindex(
        "check-doc", DOC, "--at", "v0.32.0", "--at", "v0.33.0", "--format", "json", "--db", tree_db, ok=False
    )
    assert r.exit_code == 1
    rep = json.loads(r.output)
    for i, v in enumerate(rep["versions"]):
        got = [(x["line"], x["kind"], x["claim"], x["status"], x["message"]) for x in v["results"]]
        assert len(got) == len(EXPECTED), "\n".join(map(str, got))
        for (line, kind, claim, status, message), (eline, ekind, frag, s32, s33, finding) in zip(
            got, EXPECTED, strict=True
        ):
            want = (s32, s33)[i]
            assert (line, kind) == (eline, ekind) and frag in claim, (
                (line, kind, claim),
                (eline, ekind, frag),
            )
            assert status == want, (v["version"], line, claim, status, message)
            if status != "ok" and finding:
                assert finding in message, (v["version"], line, claim, message)
