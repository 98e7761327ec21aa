"""What a version's prose says (issue 27): the search box finds a model family named only in a parser class's
docstring or in the tool-calling documentation (docs/features/tool_calling.md, recorded and stored by the build),
several hits give a list; the serve line pairs a reasoning parser by the end-of-thinking token the tool parser's
code looks for, or by the documentation's flags, and says which evidence paired them. A fixture of one
engine-era version, every file (the documentation too) written here."""

from __future__ import annotations

import html
import re

import pytest
from fixtures.eras import ABS_REASONING, PLAIN_ABSTRACT, lazy_registry
from fixtures.helpers import line_of
from fixtures.search import find, listed, served

TP = "vllm/tool_parsers"
ZETA = '''from vllm.tool_parsers.abstract_tool_parser import ToolParser


class ZetaToolParser(ToolParser):
    """Tool calls of the Zeta-2.5 family."""

    def extract_tool_calls(self, text):
        if "</ponder>" in text:
            text = text.split("</ponder>")[-1]
        return text
'''
OMEGA = '''from vllm.tool_parsers.abstract_tool_parser import ToolParser


class OmegaToolParser(
    ToolParser,
):
    """Reads the JSON calls of Orca-3 and OrcaMax models
    (and the older plain format)."""

    def extract_tool_calls(self, text):
        return text
'''
KAPPA = """from vllm.tool_parsers.abstract_tool_parser import ToolParser


class KappaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        if "</think>" in text:
            return text.split("</think>")[-1]
        return text
"""


def thinking(cls: str, end: str, start: str = "<think>") -> str:
    return (
        f"from vllm.reasoning.abs_reasoning_parsers import ReasoningParser\n\n\nclass {cls}(ReasoningParser):\n"
        f'    start_token = "{start}"\n    end_token = "{end}"\n\n'
        f"    def extract_reasoning(self, text, request):\n        return text\n"
    )


DOC = """# Calling tools

Start the server with `--enable-auto-tool-choice`.

## Zeta models (`zeta`)

* `zeta-labs/Zeta-2.5-Instruct`

Flags: `--tool-call-parser zeta`

## Kappa models (`kappa`)

* `kappa-ai/Kappa-7B-Chat`
* `kappa-ai/Kappa-Mini-*`

Flags: `--tool-call-parser kappa --reasoning-parser musing`

## Widgets

* `acme/Widget-3-Large`

```bash
# either parser reads its calls
vllm serve acme/Widget-3-Large --tool-call-parser kappa  # or --tool-call-parser zeta
```

An aside: `--tool-call-parser omega --reasoning-parser deliberate` reads them too.
"""
TOOLS = {
    "zeta": ("zeta_tool_parser", "ZetaToolParser"),
    "omega": ("omega_tool_parser", "OmegaToolParser"),
    "kappa": ("kappa_tool_parser", "KappaToolParser"),
}
REASONING = {
    "ponder": ("ponder_reasoning_parser", "PonderReasoningParser"),
    "musing": ("musing_reasoning_parser", "MusingReasoningParser"),
    "deliberate": ("deliberate_reasoning_parser", "DeliberateReasoningParser"),
}
FILES = {
    f"{TP}/__init__.py": lazy_registry("tool", TOOLS),
    f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
    f"{TP}/zeta_tool_parser.py": ZETA,
    f"{TP}/omega_tool_parser.py": OMEGA,
    f"{TP}/kappa_tool_parser.py": KAPPA,
    "vllm/reasoning/__init__.py": lazy_registry("reasoning", REASONING),
    "vllm/reasoning/abs_reasoning_parsers.py": ABS_REASONING,
    "vllm/reasoning/ponder_reasoning_parser.py": thinking("PonderReasoningParser", "</ponder>", "<ponder>"),
    "vllm/reasoning/musing_reasoning_parser.py": thinking("MusingReasoningParser", "</think>"),
    "vllm/reasoning/deliberate_reasoning_parser.py": thinking("DeliberateReasoningParser", "</think>"),
    "docs/features/tool_calling.md": DOC,
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    yield from served(tmp_path_factory, "prose", FILES)


@pytest.mark.parametrize(
    "q, where",
    [
        ("Orca-3", "/-/parser/tool/omega"),  # only in OmegaToolParser's docstring (a header of two lines)
        ("orcamax", "/-/parser/tool/omega"),
    ],
)
def test_a_model_named_only_in_a_docstring_goes_to_its_parser(client, q, where):
    r = find(client, q)
    assert r.status_code == 302, (q, r.text[-600:])
    assert r.headers["location"] == where


@pytest.mark.parametrize(
    "q",
    [
        "Kappa-7B-Chat",  # only in the documentation: a model id of kappa's section
        "kappa-mini",  # a model id with a wildcard
    ],
)
def test_a_model_the_docs_name_is_answered_with_its_serve_line_and_its_parser(client, q):
    # (issue 39: the search box's answer for a model name is fit --model's: the serve line, linked to the parser)
    r = find(client, q)
    assert r.status_code == 200, (q, r.text[-600:])
    assert "--tool-call-parser kappa --reasoning-parser musing" in r.text
    assert 'href="/-/parser/tool/kappa?v=v0.30.0"' in r.text


def test_a_model_the_docs_give_several_parsers_lists_them_with_where_it_was_read(client):
    r = find(client, "Widget-3-Large")
    assert r.status_code == 200
    assert sorted(listed(r.text)) == [("tool", "kappa"), ("tool", "zeta")]
    assert "docs" in r.text and "Widget-3-Large" in r.text
    line = line_of(DOC, "`acme/Widget-3-Large`")
    assert f'href="/-/source/v0.30.0/docs/features/tool_calling.md#L{line}"' in r.text


def test_the_name_s_own_match_comes_before_the_prose(client):
    r = find(
        client, "Zeta-2.5-Instruct"
    )  # the docs' model id: its answer names zeta, not the Widgets' parsers
    assert (
        r.status_code == 200
        and "--tool-call-parser zeta" in r.text
        and "--tool-call-parser kappa" not in r.text
    )
    r = find(client, "Zeta")  # the name exactly; the documentation also lists zeta under Widgets: one name
    assert r.status_code == 302 and r.headers["location"] == "/-/parser/tool/zeta"


def serve_why(page: str) -> tuple[str, str]:
    line = re.search(r'<pre class="serve-cmd"><code>(.*?)</code></pre>', page, re.S).group(1)
    why = re.search(r'<div class="muted serve-why">(.*?)</div>', page, re.S).group(1)
    return html.unescape(line), why


def test_the_serve_line_pairs_by_the_end_token_the_tool_parser_looks_for_and_says_so(client):
    line, why = serve_why(client.html("/-/parser/tool/zeta"))
    assert (
        line == "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser zeta --reasoning-parser ponder"
    )
    assert 'data-by="end token"' in why and "&lt;/ponder&gt;" in why
    at = line_of(ZETA, 'if "</ponder>" in text')
    assert f'href="/-/source/v0.30.0/{TP}/zeta_tool_parser.py#L{at}"' in why


def test_the_serve_line_pairs_by_the_docs_when_the_code_shows_nothing_else(client):
    # kappa looks for </think>, the end token of two reasoning parsers, neither of its name: the token pairs
    # none of them; the documentation's flags pair musing
    line, why = serve_why(client.html("/-/parser/tool/kappa"))
    assert (
        line
        == "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser kappa --reasoning-parser musing"
    )
    assert 'data-by="docs"' in why
    at = line_of(DOC, "--reasoning-parser musing")
    assert f'href="/-/source/v0.30.0/docs/features/tool_calling.md#L{at}"' in why
    assert "its end token" in why  # musing ends at the token kappa looks for: it agrees


def test_no_pairing_says_why_and_names_the_parsers_ending_at_its_token(client):
    # omega: no reasoning parser of its name or class, no token; the documentation pairs it only in an aside in
    # another model's section, which pairs nothing
    line, why = serve_why(client.html("/-/parser/tool/omega"))
    assert "--reasoning-parser" not in line
    assert "No reasoning parser pairs with it" in why and "end token of" not in why


def test_the_documentation_is_stored_and_shown_as_a_source_page(client):
    page = client.html("/-/source/v0.30.0/docs/features/tool_calling.md")
    assert "is not stored" not in page and "Kappa-7B-Chat" in page
