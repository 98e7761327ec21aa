"""The parser contract and check-plugin on real releases (issue 28), from the package index's source
archives (cached): nine releases at the boundaries that matter to a plugin author, built with the serving
modules included so that how each release constructs tool parsers is recorded.

Two plugins written here (their own code, in the style of their era): one for v0.10 (the old package path
vllm.entrypoints.openai.tool_parsers, decorator registration, a `(tokenizer)` constructor) and one for v0.32
(vllm.tool_parsers, `(tokenizer, tools)`, registered with register_module(..., module=...) under a built-in's
name). The expected values were established by reading the releases by hand (`git show vX:path`):

- v0.13.0: vllm/entrypoints/openai/tool_parsers/ holds only __init__.py, a module __getattr__ that imports
  ToolParser and ToolParserManager from vllm.tool_parsers and warns;
- v0.14.0: vllm/entrypoints/openai/tool_parsers/ has no file left;
- v0.18.1: ToolParser.__init__(self, tokenizer: TokenizerLike) (vllm/tool_parsers/abstract_tool_parser.py),
  and vllm/entrypoints/openai/chat_completion/serving.py constructs `self.tool_parser(tokenizer)`;
- v0.19.0: ToolParser.__init__(self, tokenizer, tools: list[Tool] | None = None), and the same serving module
  constructs `self.tool_parser(tokenizer, request.tools)`.
"""

from __future__ import annotations

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network

TAGS = "v0.10.0,v0.12.0,v0.13.0,v0.14.0,v0.18.1,v0.19.0,v0.20.0,v0.32.0,v0.33.0"
SERVING = "vllm/entrypoints/*serving*.py"

PLUGIN_V10 = """
import json
from collections.abc import Sequence

from vllm.entrypoints.openai.protocol import ChatCompletionRequest, DeltaMessage, ExtractedToolCallInformation
from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager
from vllm.transformers_utils.tokenizer import AnyTokenizer


@ToolParserManager.register_module("acme_json")
class AcmeJsonToolParser(ToolParser):
    def __init__(self, tokenizer: AnyTokenizer):
        super().__init__(tokenizer)
        self.start = "<calls>"

    def extract_tool_calls(self, model_output: str, request: ChatCompletionRequest) -> ExtractedToolCallInformation:
        if self.start not in model_output:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        calls = json.loads(model_output.split(self.start, 1)[1])
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=[], content=None)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: ChatCompletionRequest) -> DeltaMessage | None:
        return DeltaMessage(content=delta_text)
"""

PLUGIN_V32 = """
import json
from collections.abc import Sequence

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.engine.protocol import DeltaMessage, ExtractedToolCallInformation
from vllm.tokenizers import TokenizerLike
from vllm.tool_parsers import ToolParser, ToolParserManager


class AcmeHermesToolParser(ToolParser):
    def __init__(self, tokenizer: TokenizerLike, tools=None):
        super().__init__(tokenizer, tools)
        self.start = "<tool_call>"

    def extract_tool_calls(self, model_output: str, request: ChatCompletionRequest) -> ExtractedToolCallInformation:
        calls = [json.loads(part) for part in model_output.split(self.start)[1:]]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=[], content=None)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: ChatCompletionRequest) -> DeltaMessage | None:
        return DeltaMessage(content=delta_text)


ToolParserManager.register_module("hermes", module=AcmeHermesToolParser)
"""


@pytest.fixture(scope="session")
def contract_db(pypi, tmp_path_factory):  # noqa: F811
    db = tmp_path_factory.mktemp("real-contract") / "real.db"
    tpindex("build", "--from-pypi", "--tags", TAGS, "--include", SERVING, "--db", db, "-q")
    return db


def _check(db, text):
    import textwrap

    from indexer.api import Index

    return Index(db).check_plugin(textwrap.dedent(text).lstrip("\n").encode(), tags="v0.10.0..v0.33.0")


def _at(report, version):
    (v,) = [v for v in report.versions if v.version == version]
    return v


def _broken(pv, what):
    return [f for f in pv.findings if f.what == what and f.status == "broken"]


def test_a_v0_10_plugin_works_until_the_old_package_goes(contract_db):
    r = _check(contract_db, PLUGIN_V10)
    assert r.compatible == ["v0.10.0", "v0.12.0", "v0.13.0"]
    assert (r.first_compatible, r.last_compatible) == ("v0.10.0", "v0.13.0")
    shim = [
        f
        for f in _at(r, "v0.13.0").findings
        if f.what == "import" and f.subject.endswith("import ToolParser")
    ]
    assert [(f.status, f.file) for f in shim] == [("ok", "vllm/entrypoints/openai/tool_parsers/__init__.py")]
    assert "__getattr__" in shim[0].message
    gone = _broken(_at(r, "v0.14.0"), "import")
    assert {f.subject for f in gone} == {
        "from vllm.entrypoints.openai.tool_parsers import ToolParser",
        "from vllm.entrypoints.openai.tool_parsers import ToolParserManager",
    }
    assert all("vllm.tool_parsers" in f.message for f in gone)
    assert not _broken(_at(r, "v0.18.1"), "constructor")  # serving still constructs (tokenizer)
    con = _broken(_at(r, "v0.19.0"), "constructor")
    serving = [f for f in con if f.file == "vllm/entrypoints/openai/chat_completion/serving.py"]
    assert serving and all("self.tool_parser(tokenizer, request.tools)" in f.message for f in serving)
    assert any("tools" in f.message and f.file == "vllm/tool_parsers/abstract_tool_parser.py" for f in con)


def test_a_v0_32_plugin_works_from_the_tools_constructor_on(contract_db):
    r = _check(contract_db, PLUGIN_V32)
    assert r.compatible == ["v0.19.0", "v0.20.0", "v0.32.0", "v0.33.0"]
    for version in ("v0.10.0", "v0.12.0"):
        assert {f.subject for f in _broken(_at(r, version), "import")} >= {
            "from vllm.tool_parsers import ToolParser"
        }
    for version in ("v0.13.0", "v0.14.0", "v0.18.1"):
        pv = _at(r, version)
        assert not _broken(pv, "import")
        (sup,) = _broken(pv, "super-call")
        assert sup.file == "vllm/tool_parsers/abstract_tool_parser.py"
        assert (
            "super().__init__(tokenizer, tools)" in sup.message
            and "(self, tokenizer: TokenizerLike)" in sup.message
        )
    shadow = [f for f in _at(r, "v0.33.0").findings if f.what == "shadow"]
    assert [f.status for f in shadow] == ["warning"] and "hermes" in shadow[0].message


def test_contract_diff_of_the_old_package_and_of_the_constructor(contract_db):
    from indexer.api import Index

    ix = Index(contract_db)
    d = ix.contract_diff("v0.13.0", "v0.14.0")
    removed = {c.subject for c in d.changes if c.type == "import-path-removed"}
    assert removed == {
        "from vllm.entrypoints.openai.tool_parsers import ToolParser",
        "from vllm.entrypoints.openai.tool_parsers import ToolParserManager",
    }
    d = ix.contract_diff("v0.18.1", "v0.19.0")
    (p,) = [c for c in d.changes if c.type == "parameter-added" and c.subject == "ToolParser.__init__(tools)"]
    assert p.breaking and p.file_b == "vllm/tool_parsers/abstract_tool_parser.py"
    con = [
        c for c in d.changes if c.type == "construction-changed" and c.subject == "tool parser construction"
    ]
    assert con and "self.tool_parser(tokenizer, request.tools)" in con[0].after
