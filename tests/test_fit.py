"""`tpindex fit FILE` (issue 29): which parser fits a model, from a chat template, a tokenizer_config.json, a
tokenizer.json or a raw output, ranked by evidence from the index of one version.

The fixture is a lazy-registry era version (v0.32.0 layout) with hand-written parsers whose markup differs in
the ways the issue names, and the chat templates it ships for two of them:

    tagjson  JSON inside <tj_call> ... </tj_call> (a regex, adjust_request sets skip_special_tokens = False)
    xmlfun   <xf_call> with <function=NAME> / <parameter=KEY> inside
    pyth     pythonic calls [f(a=1)], known only from its regular expression (no token at all)
    fullw    full-width tokens <｜fw▁calls▁begin｜> ... (U+FF5C and U+2581)
    special  <|sp_call|> ... <|/sp_call|>, no adjust_request of its own
    thinker  (reasoning) <think> ... </think>

Every template, tokenizer file and output below is written here; the names of the parsers never appear in
them (nor in tpindex's code): the ranking can only come from the parsers' facts.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from fixtures.eras import lazy_registry
from fixtures.helpers import build_tags, make_repo, tpindex

TOOL_ABSTRACT = """
class ToolParser:
    def adjust_request(self, request):
        return request

    def extract_tool_calls(self, text, request):
        raise NotImplementedError


class ToolParserManager:
    @classmethod
    def register_lazy_module(cls, name, module_path, class_name):
        pass
"""

TAGJSON = r"""
import json
import re

from vllm.tool_parsers.abstract_tool_parser import ToolParser


class TagJsonToolParser(ToolParser):
    tool_call_start_token = "<tj_call>"
    tool_call_end_token = "</tj_call>"
    tool_call_regex = re.compile(r"<tj_call>\s*(\{.*?\})\s*</tj_call>", re.DOTALL)

    def adjust_request(self, request):
        if request.tools:
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, text, request):
        return [json.loads(m) for m in self.tool_call_regex.findall(text)]
"""

XMLFUN = r"""
import re

from vllm.tool_parsers.abstract_tool_parser import ToolParser

CALL_START = "<xf_call>"
CALL_END = "</xf_call>"
FUNC_PREFIX = "<function="
FUNC_END = "</function>"
PARAM_PREFIX = "<parameter="
PARAM_END = "</parameter>"


class XmlFunToolParser(ToolParser):
    param_regex = re.compile(r"<parameter=(\w+)>(.*?)</parameter>", re.DOTALL)

    def extract_tool_calls(self, text, request):
        return self.param_regex.findall(text)
"""

PYTH = r"""
import re

from vllm.tool_parsers.abstract_tool_parser import ToolParser


class PythToolParser(ToolParser):
    CALLS_REGEX = re.compile(r"\[\s*\w+\((\w+=[^,)]*,?\s*)*\)(\s*,\s*\w+\((\w+=[^,)]*,?\s*)*\))*\s*\]", re.DOTALL)

    def extract_tool_calls(self, text, request):
        return self.CALLS_REGEX.match(text.strip())
"""

FULLW = r"""
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class FullWidthToolParser(ToolParser):
    calls_begin_token = "<｜fw▁calls▁begin｜>"
    calls_end_token = "<｜fw▁calls▁end｜>"
    call_begin_token = "<｜fw▁call▁begin｜>"
    call_end_token = "<｜fw▁call▁end｜>"
    sep_token = "<｜fw▁sep｜>"

    def extract_tool_calls(self, text, request):
        return text.split(self.sep_token)
"""

SPECIAL = r"""
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class SpecialToolParser(ToolParser):
    bot_token = "<|sp_call|>"
    eot_token = "<|/sp_call|>"

    def extract_tool_calls(self, text, request):
        return text.partition(self.bot_token)[2]
"""

REASONING_ABSTRACT = """
class ReasoningParser:
    def extract_reasoning(self, text, request):
        raise NotImplementedError


class ReasoningParserManager:
    @classmethod
    def register_lazy_module(cls, name, module_path, class_name):
        pass
"""

THINKER = """
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser


class ThinkerReasoningParser(ReasoningParser):
    start_token = "<think>"
    end_token = "</think>"

    def extract_reasoning(self, text, request):
        return text.partition(self.end_token)
"""

# the shipped templates: a system turn, a user turn, an assistant turn with the call markup
SHIPPED_TAGJSON = """\
{%- for message in messages %}
{{- '<|turn|>' + message.role + '\\n' }}
{%- if message.tool_calls %}
{%- for tool_call in message.tool_calls %}
{{- '<tj_call>\\n{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}\\n</tj_call>' }}
{%- endfor %}
{%- else %}
{{- message.content }}
{%- endif %}
{{- '<|end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|turn|>assistant\\n' }}{%- endif %}
"""
SHIPPED_XMLFUN = """\
{%- for message in messages %}
{{- '<|turn|>' + message.role + '\\n' }}
{%- if message.tool_calls %}
{%- for tool_call in message.tool_calls %}
{{- '<xf_call>\\n<function=' + tool_call.function.name + '>\\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<parameter=' + key + '>\\n' + value | string + '\\n</parameter>\\n' }}
{%- endfor %}
{{- '</function>\\n</xf_call>' }}
{%- endfor %}
{%- else %}
{{- message.content }}
{%- endif %}
{{- '<|end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|turn|>assistant\\n' }}{%- endif %}
"""


def names(*pairs):
    return {name: (file, cls) for name, file, cls in pairs}


HISTORY = {
    "v0.32.0": {
        "vllm/tool_parsers/__init__.py": lazy_registry(
            "tool",
            names(
                ("tagjson", "tagjson_tool_parser", "TagJsonToolParser"),
                ("xmlfun", "xmlfun_tool_parser", "XmlFunToolParser"),
                ("pyth", "pyth_tool_parser", "PythToolParser"),
                ("fullw", "fullw_tool_parser", "FullWidthToolParser"),
                ("special", "special_tool_parser", "SpecialToolParser"),
            ),
        ),
        "vllm/tool_parsers/abstract_tool_parser.py": TOOL_ABSTRACT,
        "vllm/tool_parsers/tagjson_tool_parser.py": TAGJSON,
        "vllm/tool_parsers/xmlfun_tool_parser.py": XMLFUN,
        "vllm/tool_parsers/pyth_tool_parser.py": PYTH,
        "vllm/tool_parsers/fullw_tool_parser.py": FULLW,
        "vllm/tool_parsers/special_tool_parser.py": SPECIAL,
        "vllm/reasoning/__init__.py": lazy_registry(
            "reasoning", names(("thinker", "thinker_reasoning_parser", "ThinkerReasoningParser"))
        ),
        "vllm/reasoning/abs_reasoning_parsers.py": REASONING_ABSTRACT,
        "vllm/reasoning/thinker_reasoning_parser.py": THINKER,
        "examples/tool_chat_template_tagjson.jinja": SHIPPED_TAGJSON,
        "examples/tool_chat_template_xmlfun.jinja": SHIPPED_XMLFUN,
    }
}


@pytest.fixture(scope="module")
def fit_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("fit")
    db = root / "fit.db"
    build_tags(make_repo(root / "repo", HISTORY), db, "v0.32.0")
    return db


def template(call_markup: str, header: str = "<<{role}>>\n", end: str = "<<end>>\n") -> str:
    """A model's own chat template (not a shipped one): its own turn tokens around `call_markup`, a Jinja
    expression of the loop variable `tool_call`."""
    return (
        "{%- for message in messages %}\n"
        "{{- '" + header.replace("{role}", "' + message.role + '").replace("\n", "\\n") + "' }}\n"
        "{%- if message.tool_calls %}\n"
        "{%- for tool_call in message.tool_calls %}\n"
        "{{- " + call_markup + " }}\n"
        "{%- endfor %}\n"
        "{%- else %}\n"
        "{{- message.content }}\n"
        "{%- endif %}\n"
        "{{- '" + end.replace("\n", "\\n") + "' }}\n"
        "{%- endfor %}\n"
    )


def fit(db, tmp_path, text: str, *args: str, fmt: str = "json", name: str = "model.txt"):
    """`tpindex fit` on a text (without the proof: these fixture trees are not runnable; tests/test_advice.py
    proves pairs on runnable ones)."""
    path = tmp_path / name  # a neutral file name: the content decides what the file is
    path.write_text(text, encoding="utf-8")
    r = tpindex("fit", path, "--db", db, "--format", fmt, "--no-proof", *args, ok=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output) if fmt == "json" else r.output


def top(answer, kind="tool"):
    return [c["name"] for c in answer[kind] if c["rank"] == 1]


def evidence(answer, name, kind="tool"):
    (cand,) = [c for c in answer[kind] if c["name"] == name]
    return cand["evidence"]


JSON_IN_TAGS = template(
    "'<tj_call>' + {'name': tool_call.function.name, 'arguments': tool_call.function.arguments}"
    " | tojson + '</tj_call>'"
)


def test_json_in_tags_template_ranks_the_parser_whose_tokens_regex_and_shape_it_renders(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, JSON_IN_TAGS)
    assert ans["observed"]["input"] == "template"
    assert top(ans) == ["tagjson"]
    kinds = {(e["kind"], e["stance"]) for e in evidence(ans, "tagjson")}
    assert {("sentinel", "for"), ("regex", "for"), ("shape", "for")} <= kinds
    assert ans["fits"] is True
    assert ans["serve"] == (
        f"vllm serve MODEL --enable-auto-tool-choice --tool-call-parser tagjson"
        f" --chat-template {tmp_path / 'model.txt'}"
    )
    # the shipped template of the family, and what differs in the call markup, character by character
    diff = ans["template_diff"]
    assert diff["template"] == "examples/tool_chat_template_tagjson.jinja" and diff["identical"] is False
    assert ("-", "\n") in [(p["op"], p["text"]) for p in diff["pieces"]]


def test_the_shipped_template_itself_is_named_as_identical(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, SHIPPED_TAGJSON)
    assert top(ans) == ["tagjson"]
    assert ans["template_diff"]["identical"] is True
    assert ans["serve"].endswith("--chat-template examples/tool_chat_template_tagjson.jinja")


XML = template(
    "'<xf_call><function=' + tool_call.function.name + '><parameter=city>Paris</parameter>"
    "</function></xf_call>'"
)


def test_xml_template_ranks_the_xml_parser_and_not_the_json_one(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, XML)
    assert top(ans) == ["xmlfun"]
    shape = [e for e in evidence(ans, "xmlfun") if e["kind"] == "shape"]
    assert shape and shape[0]["stance"] == "for" and "<function=" in shape[0]["text"]
    assert "tagjson" not in top(ans)


PYTHONIC = template("'[' + tool_call.function.name + '(city=\"Paris\")]'")


def test_pythonic_template_ranks_the_parser_known_only_from_its_regex(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, PYTHONIC)
    assert ans["observed"]["shapes"][0] == "pythonic"
    assert top(ans) == ["pyth"]
    regex = [e for e in evidence(ans, "pyth") if e["kind"] == "regex"]
    assert regex and regex[0]["stance"] == "for" and "CALLS_REGEX" in regex[0]["text"]


LOOK_ALIKE = template(
    "'<|fw calls begin|><|fw call begin|>' + tool_call.function.name + '<|fw sep|>'"
    " + tool_call.function.arguments | tojson + '<|fw call end|><|fw calls end|>'"
)


def test_look_alike_sentinels_are_named_by_code_point_and_do_not_fit_as_written(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, LOOK_ALIKE)
    assert top(ans) == ["fullw"]
    alike = [e for e in evidence(ans, "fullw") if e["kind"] == "look-alike"]
    assert alike and {e["stance"] for e in alike} == {"for", "against"}
    said = " ".join(e["text"] for e in alike)
    assert "U+FF5C FULLWIDTH VERTICAL LINE" in said and "U+007C VERTICAL LINE" in said
    assert "U+2581 LOWER ONE EIGHTH BLOCK" in said and "U+0020 SPACE" in said
    assert ans["fits"] is False and ans["serve"] is None
    assert "fullw" in ans["verdict"] and "nothing fits as written" in ans["verdict"]


def tokenizer_json(*tokens: str, special: bool = True) -> str:
    return json.dumps(
        {
            "version": "1.0",
            "added_tokens": [
                {
                    "id": i,
                    "content": t,
                    "special": special,
                    "single_word": False,
                    "lstrip": False,
                    "rstrip": False,
                    "normalized": False,
                }
                for i, t in enumerate(tokens, 100)
            ],
            "model": {"type": "BPE", "vocab": {"a": 0}},
        }
    )


def test_a_tokenizer_missing_the_start_token_counts_against_the_parser(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, tokenizer_json("<|turn|>", "</tj_call>"))
    assert ans["observed"]["input"] == "tokenizer"
    missing = [e for e in evidence(ans, "tagjson") if e["kind"] == "vocabulary" and e["stance"] == "against"]
    assert [e["token"] for e in missing] == ["<tj_call>"]
    full = fit(fit_db, tmp_path, tokenizer_json("<|turn|>", "<tj_call>", "</tj_call>"))
    assert top(full) == ["tagjson"]
    assert not [e for e in evidence(full, "tagjson") if e["stance"] == "against"]


def tokenizer_config(chat_template, special_tokens: list[str]) -> str:
    return json.dumps(
        {
            "chat_template": chat_template,
            "added_tokens_decoder": {
                str(i): {"content": t, "special": True, "lstrip": False, "rstrip": False, "normalized": False}
                for i, t in enumerate(special_tokens, 200)
            },
        }
    )


SPECIAL_TEMPLATE = template(
    "'<|sp_call|>' + tool_call.function.name + ' ' + tool_call.function.arguments | tojson + '<|/sp_call|>'"
)


def test_a_special_token_the_parser_needs_is_stripped_unless_adjust_request_keeps_it(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, tokenizer_config(SPECIAL_TEMPLATE, ["<|sp_call|>", "<|/sp_call|>"]))
    assert ans["observed"]["input"] == "tokenizer_config"
    assert top(ans) == ["special"]
    stripped = [e for e in evidence(ans, "special") if e["kind"] == "stripped"]
    assert stripped and stripped[0]["stance"] == "against" and stripped[0]["token"] == "<|sp_call|>"
    assert "skip_special_tokens" in stripped[0]["text"]
    assert ans["fits"] is False
    # the same markup as special tokens for the parser that sets skip_special_tokens = False: kept
    kept = fit(
        fit_db,
        tmp_path,
        tokenizer_config([{"name": "default", "template": JSON_IN_TAGS}], ["<tj_call>", "</tj_call>"]),
    )
    assert top(kept) == ["tagjson"] and kept["fits"] is True
    notes = [e for e in evidence(kept, "tagjson") if e["kind"] == "stripped"]
    assert notes and notes[0]["stance"] == "note" and "request.tools" in notes[0]["text"]
    assert "--chat-template" not in kept["serve"]  # the model's own template is used


def test_a_raw_output_is_read_as_one(fit_db, tmp_path):
    out = 'Let me check.<tj_call>\n{"name": "lookup", "arguments": {"q": "x"}}\n</tj_call>'
    ans = fit(fit_db, tmp_path, out)
    assert ans["observed"]["input"] == "output"
    assert top(ans) == ["tagjson"] and ans["fits"] is True
    assert ans["serve"] == "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser tagjson"


def test_reasoning_markup_ranks_the_reasoning_parser_and_adds_it_to_the_serve_line(fit_db, tmp_path):
    out = '<think>The user wants a lookup.</think><tj_call>{"name": "lookup", "arguments": {}}</tj_call>'
    ans = fit(fit_db, tmp_path, out)
    assert top(ans, "reasoning") == ["thinker"]
    assert ans["serve"].endswith("--tool-call-parser tagjson --reasoning-parser thinker")
    only = fit(fit_db, tmp_path, out, "--kind", "reasoning")
    assert only["tool"] == [] and top(only, "reasoning") == ["thinker"]


# A reasoning parser whose class also holds a tool parser's call token (vLLM's unified parsers do: one class
# for both kinds, registered as a reasoning parser only here)
DUAL = """
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser


class DualReasoningParser(ReasoningParser):
    start_token = "<think>"
    end_token = "</think>"
    call_start_token = "<tj_call>"

    def extract_reasoning(self, text, request):
        return text.partition(self.end_token)
"""


@pytest.fixture(scope="module")
def dual_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("fit-dual")
    tree = {
        **HISTORY["v0.32.0"],
        "vllm/reasoning/dual_reasoning_parser.py": DUAL,
        "vllm/reasoning/__init__.py": lazy_registry(
            "reasoning",
            names(
                ("thinker", "thinker_reasoning_parser", "ThinkerReasoningParser"),
                ("dual", "dual_reasoning_parser", "DualReasoningParser"),
            ),
        ),
    }
    build_tags(make_repo(root / "repo", {"v0.32.0": tree}), root / "fit.db", "v0.32.0")
    return root / "fit.db"


def test_no_reasoning_parser_without_think_markup(dual_db, tmp_path):
    """The call token is as much the tool parser's as the reasoning parser's (one file each): it is no think
    markup, so no --reasoning-parser is added, and it stays the tool parser's evidence."""
    out = '<tj_call>{"name": "lookup", "arguments": {}}</tj_call>'
    ans = fit(dual_db, tmp_path, out)
    assert ans["serve"] == "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser tagjson"
    # the token is the tool parser's evidence still: one reasoning-only file holds it, as one tool-only file does
    (tagjson,) = [c for c in ans["tool"] if c["name"] == "tagjson"]
    assert any(e["kind"] == "sentinel" and e["token"] == "<tj_call>" for e in tagjson["evidence"])
    think = "<think>The user wants a lookup.</think>" + out
    ans = fit(dual_db, tmp_path, think)
    assert "--reasoning-parser" in ans["serve"]
    by_name = {c["name"]: c for c in ans["reasoning"]}
    assert by_name["dual"]["score"] == by_name["thinker"]["score"] and by_name["dual"]["rank"] == 1
    assert not [e for e in by_name["dual"]["evidence"] if e["token"] == "<tj_call>"]


def test_nothing_fits_says_so_and_what_the_closest_expect(fit_db, tmp_path):
    ans = fit(fit_db, tmp_path, template("'@@CALL ' + tool_call.function.name + ' @@END'"))
    assert ans["fits"] is False and ans["serve"] is None
    assert ans["verdict"].startswith("nothing fits")
    assert "expects" in ans["verdict"]


def test_text_and_markdown_end_with_the_serve_line_and_json_follows_its_schema(fit_db, tmp_path):
    from indexer.schemas import load

    jsonschema.validate(fit(fit_db, tmp_path, JSON_IN_TAGS), load("fit"))
    jsonschema.validate(fit(fit_db, tmp_path, LOOK_ALIKE), load("fit"))
    text = fit(fit_db, tmp_path, JSON_IN_TAGS, fmt="text")
    assert "1. tagjson" in text and text.rstrip().splitlines()[-1].startswith("=> vllm serve MODEL")
    md = fit(fit_db, tmp_path, JSON_IN_TAGS, fmt="markdown")
    assert "| 1 | tagjson |" in md and "```sh\nvllm serve MODEL" in md


def test_user_mistakes_are_one_line_and_a_hint(fit_db, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    r = tpindex("fit", empty, "--db", fit_db, ok=False)
    assert r.exit_code == 2 and "is empty" in r.output and "Hint:" in r.output
    r = tpindex("fit", tmp_path / "nope.json", "--db", fit_db, ok=False)
    assert r.exit_code == 2
    path = tmp_path / "t.jinja"
    path.write_text(JSON_IN_TAGS)
    r = tpindex("fit", path, "--at", "v0.9.0", "--db", fit_db, ok=False)
    assert r.exit_code == 2 and "not indexed" in r.output
    r = tpindex("fit", path, "--replay", "--db", fit_db, ok=False)
    assert r.exit_code == 2 and "replay" in r.output and "Hint:" in r.output


def test_the_query_layer_and_the_mcp_tool_answer_the_same(fit_db):
    import anyio

    from indexer.api import Index
    from indexer.mcp.tools import stdio_server

    ans = Index(fit_db).fit(JSON_IN_TAGS, name="t.jinja")
    assert ans.tool[0].name == "tagjson"

    async def call():
        server = stdio_server(str(fit_db))
        return await server.call_tool("fit", {"text": JSON_IN_TAGS})

    result = anyio.run(call)
    data = result.structured_content if hasattr(result, "structured_content") else result[1]
    assert data["tool"][0]["name"] == "tagjson"


def test_the_web_page_takes_a_pasted_file_and_shows_the_same_answer(fit_db, tmp_path):
    import re

    from fixtures.serve import serve

    client = serve(fit_db)
    try:
        page = client.get("/-/fit")
        assert page.status_code == 200 and '<textarea name="text"' in page.text and 'type="file"' in page.text
        token = re.search(r'name="csrftoken" value="([^"]+)"', page.text).group(1)
        r = client.post(
            "/-/fit", data={"csrftoken": token, "text": JSON_IN_TAGS, "at": "v0.32.0"}, cookies=page.cookies
        )
        assert r.status_code == 200, r.text[:500]
        want = fit(fit_db, tmp_path, JSON_IN_TAGS)
        ranked = re.findall(r'<tr data-kind="tool" data-name="([\w-]+)" data-rank="(\d+)">', r.text)
        assert ranked == [(c["name"], str(c["rank"])) for c in want["tool"]]
        assert "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser tagjson" in r.text
        assert "&lt;tj_call&gt;" in r.text and "<tj_call>" not in r.text  # escaped
        r = client.post(
            "/-/fit", data={"csrftoken": token, "text": JSON_IN_TAGS, "at": "v9.9.9"}, cookies=page.cookies
        )
        assert r.status_code == 200 and "v9.9.9 is not indexed" in r.text
    finally:
        client.close()
