"""Method signatures, a fact kind of their own (issue 28): every function and method as written — each
parameter's kind, annotation and default, the return annotation, decorators — and the attributes a class
body declares; and the calls vLLM's own code makes on parser objects (constructions and method calls),
which is how serving constructs a parser at each version.

Fixture texts are written here, imitating the shape of vLLM's abstract parser modules (never copied)."""

from __future__ import annotations

import json

from fixtures.helpers import build_tags, line_of, make_repo, rows

BASE = '''
from typing import Any

from vllm.protocol import ChatRequest, Extracted


class ToolParser:
    """A base."""

    supports_named: bool = True
    structural_model: str | None = None
    registry: dict[str, type] = {}
    declared_only: int
    plain = "x"

    def __init__(self, tokenizer: "Tok", tools: list[Any] | None = None):
        self.tokenizer = tokenizer

        def inner(a, b):
            return a

    @classmethod
    def register_module(cls, name: str | list[str] | None = None, force: bool = True,
                        module: type | None = None) -> type | None:
        return module

    def extract(self, text: str, request: ChatRequest) -> Extracted:
        raise NotImplementedError

    def odd(self, a, /, b, *args: Any, c=1, d: int = 2, **kwargs) -> None:
        pass

    def bare(self, a, *, key):
        pass

    async def streaming(self, *, delta=None):
        pass


def helper(tools, *, strict=False) -> dict:
    return {}
'''


def _facts(text: str) -> list[dict]:
    import textwrap

    from indexer.extract import parse

    out = parse(textwrap.dedent(text).lstrip("\n").encode())
    assert out["status"] == "ok"
    return out["facts"]["signatures"]


def _by(facts, cls, name):
    (found,) = [f for f in facts if f["class"] == cls and f["name"] == name]
    return found


def test_parameters_kinds_defaults_and_annotations_as_written():
    facts = _facts(BASE)
    init = _by(facts, "ToolParser", "__init__")
    assert init["kind"] == "method"
    assert init["line"] == line_of(BASE, "def __init__")
    assert init["params"] == [
        ["self", "positional-or-keyword", None, None],
        ["tokenizer", "positional-or-keyword", '"Tok"', None],
        ["tools", "positional-or-keyword", "list[Any] | None", "None"],
    ]
    reg = _by(facts, "ToolParser", "register_module")
    assert reg["decorators"] == ["classmethod"]
    assert reg["line"] == line_of(BASE, "@classmethod")
    assert reg["returns"] == "type | None"
    assert [p[0] for p in reg["params"]] == ["cls", "name", "force", "module"]
    assert reg["params"][2] == ["force", "positional-or-keyword", "bool", "True"]
    odd = _by(facts, "ToolParser", "odd")
    assert odd["params"] == [
        ["self", "positional-only", None, None],
        ["a", "positional-only", None, None],
        ["b", "positional-or-keyword", None, None],
        ["args", "var-positional", "Any", None],
        ["c", "keyword-only", None, "1"],
        ["d", "keyword-only", "int", "2"],
        ["kwargs", "var-keyword", None, None],
    ]
    assert odd["returns"] == "None"
    assert _by(facts, "ToolParser", "bare")["params"][2] == ["key", "keyword-only", None, None]
    assert _by(facts, "ToolParser", "streaming")["is_async"] is True
    assert _by(facts, "ToolParser", "extract")["returns"] == "Extracted"


def test_module_functions_yes_closures_no():
    facts = _facts(BASE)
    helper = _by(facts, None, "helper")
    assert helper["kind"] == "function"
    assert helper["params"][1] == ["strict", "keyword-only", None, "False"]
    assert not [f for f in facts if f["name"] == "inner"]


def test_class_attributes_with_annotation_and_value():
    facts = _facts(BASE)
    attrs = {f["name"]: (f["annotation"], f["value"]) for f in facts if f["kind"] == "attribute"}
    assert attrs == {
        "supports_named": ("bool", "True"),
        "structural_model": ("str | None", "None"),
        "registry": ("dict[str, type]", "{}"),
        "declared_only": ("int", None),
        "plain": (None, '"x"'),
    }


SERVING = """
class Serving:
    def __init__(self, manager, name):
        self.tool_parser = manager.get_tool_parser(name)

    def create(self, tokenizer, request):
        tool_parser = self.tool_parser(tokenizer)
        calls = tool_parser.extract_tool_calls(request.text, request=request)
        reasoning_parser = self.reasoning_parser_cls(tokenizer, *request.extra, **request.kw)
        return calls, reasoning_parser


class Adapter:
    def __init__(self, tokenizer, tools):
        super().__init__(tokenizer, tools)
        self._tool_parser = self.__class__.tool_parser_cls(tokenizer, tools=tools)
"""


def test_calls_vllm_makes_on_parser_objects():
    import textwrap

    from indexer.extract import parse

    calls = parse(textwrap.dedent(SERVING).lstrip("\n").encode())["facts"]["parser_calls"]
    got = {
        (c["kind"], c["method"], c["callee"], c["positional"], tuple(c["keywords"]), c["star"], c["function"])
        for c in calls
    }
    assert got == {
        ("tool", "__init__", "self.tool_parser", 1, (), False, "Serving.create"),
        (
            "tool",
            "extract_tool_calls",
            "tool_parser.extract_tool_calls",
            1,
            ("request",),
            False,
            "Serving.create",
        ),
        ("reasoning", "__init__", "self.reasoning_parser_cls", 1, (), True, "Serving.create"),
        ("super", "__init__", "super().__init__", 2, (), False, "Adapter.__init__"),
        ("tool", "__init__", "self.__class__.tool_parser_cls", 1, ("tools",), False, "Adapter.__init__"),
    }
    (init,) = [c for c in calls if c["callee"] == "self.tool_parser"]
    assert init["line"] == line_of(SERVING, "self.tool_parser(tokenizer)")
    assert init["args"] == ["tokenizer"]
    (star,) = [c for c in calls if c["callee"] == "self.reasoning_parser_cls"]
    assert star["args"] == ["tokenizer", "*request.extra", "**request.kw"]


def test_signatures_and_calls_are_stored_per_blob_and_shown_per_version(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.10.0": {
                "vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py": BASE,
                "vllm/entrypoints/openai/serving_chat.py": SERVING,
            },
            "v0.10.1": {"README.md": "touch\n"},
        },
    )
    db = tmp_path / "i.db"
    build_tags(repo, db, "v0.10.0..")
    got = rows(
        db,
        "select version, class, name, params, returns from signatures_v where name = '__init__'"
        " and file like '%abstract_tool_parser.py' order by version",
    )
    assert [(r[0], r[1]) for r in got] == [("v0.10.0", "ToolParser"), ("v0.10.1", "ToolParser")]
    assert json.loads(got[0][3])[2] == ["tools", "positional-or-keyword", "list[Any] | None", "None"]
    assert rows(
        db,
        "select count(*) from signatures s join units u on u.id = s.unit_id"
        " where u.path like '%abstract_tool_parser.py' and s.name = '__init__'",
    ) == [(1,)]  # one blob
    calls = rows(
        db,
        "select version, kind, method, positional, keywords, line from parser_calls_v"
        " where kind = 'tool' and method = '__init__' and version = 'v0.10.1' order by line",
    )
    assert calls == [
        ("v0.10.1", "tool", "__init__", 1, "[]", line_of(SERVING, "self.tool_parser(tokenizer)")),
        ("v0.10.1", "tool", "__init__", 1, '["tools"]', line_of(SERVING, "tool_parser_cls(tokenizer")),
    ]
