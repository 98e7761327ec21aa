"""The operator's walk in Chromium (issue 27): home -> search "GLM-4.7" -> glm47 -> its real file at the line,
in the stored code -> the diff of its code since v0.30.0 -> the serve line (and which evidence paired its
reasoning parser); a removed name's banner; the where and check-doc pages with their links; its chat template,
in the stored code; no page of the walk links upstream without a local link beside it. Every page is saved at 1400 px and 900 px
wide (TPINDEX_SHOTS=DIR keeps them there to look at). A fixture of three engine-era versions, built with
--tree, written here:

    v0.30.0  glm47 (tool, standalone) and glm47 (reasoning); glm4_moe (tool); the glm47 chat template
    v0.31.0  the same
    v0.32.0  glm47's tool parser changes (a streaming method); glm4_moe is gone
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode, urljoin

import pytest
from fixtures.browser import follow, serve, shots_dir
from fixtures.eras import ABS_REASONING, PLAIN_ABSTRACT, lazy_registry
from fixtures.helpers import build_tags, line_of, make_repo
from fixtures.links import upstream_without_local

pytestmark = pytest.mark.slow

TP = "vllm/tool_parsers"
GLM47 = """from vllm.tool_parsers.abstract_tool_parser import ToolParser


class Glm47MoeModelToolParser(ToolParser):
    tool_call_start_token = "<tool_call>"

    def extract_tool_calls(self, text):
        return text
"""
GLM47_32 = (
    GLM47
    + """
    def extract_tool_calls_streaming(self, previous, current, delta):
        # stream each argument as it arrives
        return delta
"""
)
GLM4 = GLM47.replace("Glm47MoeModelToolParser", "Glm4MoeModelToolParser")
REASONING = """from vllm.reasoning.abs_reasoning_parsers import ReasoningParser


class Glm4MoeModelReasoningParser(ReasoningParser):
    start_token = "<think>"

    def extract_reasoning(self, text, request):
        return text
"""
TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<tool_call>\n"
TOOLS = {
    "glm47": ("glm47_moe_tool_parser", "Glm47MoeModelToolParser"),
    "glm4_moe": ("glm4_moe_tool_parser", "Glm4MoeModelToolParser"),
}
V30 = {
    f"{TP}/__init__.py": lazy_registry("tool", TOOLS),
    f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
    f"{TP}/glm47_moe_tool_parser.py": GLM47,
    f"{TP}/glm4_moe_tool_parser.py": GLM4,
    "vllm/reasoning/__init__.py": lazy_registry(
        "reasoning", {"glm47": ("glm4_moe_reasoning_parser", "Glm4MoeModelReasoningParser")}
    ),
    "vllm/reasoning/abs_reasoning_parsers.py": ABS_REASONING,
    "vllm/reasoning/glm4_moe_reasoning_parser.py": REASONING,
    "examples/tool_chat_template_glm47.jinja": TEMPLATE,
}
HISTORY = {
    "v0.30.0": V30,
    "v0.31.0": {"vllm/entrypoints/openai/api_server.py": "def main():\n    pass\n"},
    "v0.32.0": {
        f"{TP}/glm47_moe_tool_parser.py": GLM47_32,
        f"{TP}/glm4_moe_tool_parser.py": None,
        f"{TP}/__init__.py": lazy_registry("tool", {"glm47": TOOLS["glm47"]}),
    },
}
CLASS_LINE = line_of(GLM47_32, "class Glm47MoeModelToolParser")
DOC = f"Use `--tool-call-parser glm47`; its parser is `Glm47MoeModelToolParser` in `{TP}/glm47_moe_tool_parser.py`.\n"


@pytest.fixture
def walk_server(browser, tmp_path):  # noqa: F811
    from indexer.core.scope import Scope

    db = tmp_path / "walk.db"
    build_tags(
        make_repo(tmp_path / "repo", HISTORY), db, "v0.30.0..v0.32.0", scope=Scope.named("default", tree=True)
    )
    yield from serve(db, tmp_path)


def shoot(browser, url: str, shots, name: str, height: int = 1400) -> None:  # noqa: F811
    for width in (1400, 900):
        browser.screenshot(url, shots / f"walk-{name}-{width}.png", f"{width},{height}")


def text(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page)).split())


def test_the_operators_walk_from_a_model_name_to_its_code_template_diff_and_serve_line(
    browser,
    walk_server,  # noqa: F811
    tmp_path,
):
    shots = shots_dir(tmp_path)
    base = walk_server
    home = browser.dom(base)
    shoot(browser, base, shots, "home")
    search = follow(
        home, base, r'<form class="tpindex-homefind" action="([^"]+)" method="get"', "a search box"
    )

    # search a model's name: glm47 is a tool and a reasoning parser, so a list, the tool parser first
    found_url = search + "?" + urlencode({"q": "GLM-4.7"})
    found = browser.dom(found_url)
    shoot(browser, found_url, shots, "find", 700)
    parser_url = follow(
        found,
        base,
        r'<a class="tpindex-name" href="([^"]*/-/parser/tool/glm47)">glm47</a>',
        "the search lists glm47's tool parser",
    )
    page = browser.dom(parser_url)
    assert 'data-kind="tool" data-name="glm47" data-version="v0.32.0"' in page
    shoot(browser, parser_url, shots, "glm47", 2400)

    # its real file at the class's line, in the stored code, upstream beside it
    source_url = follow(
        page,
        base,
        rf'<a class="tpindex-src" href="([^"]*/-/source/v0\.32\.0/{TP}/glm47_moe_tool_parser\.py'
        rf'#L{CLASS_LINE})"',
        "the card links the real class to its line in the stored code",
    )
    source = browser.dom(source_url)
    assert f'id="L{CLASS_LINE}"' in source and "stream each argument as it arrives" in source
    shoot(browser, source_url, shots, "source", 900)

    # "changed since v0.30.0": the picker's form, as the browser submits it
    form = re.search(r'<form class="pick since" method="get" action="([^"]+)">(.*?)</form>', page, re.S)
    assert form, "the page picks a version to diff from"
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form.group(2)))
    assert "v0.30.0" in re.findall(r"<option[^>]*>([^<]+)</option>", form.group(2))
    diff_url = urljoin(base, html.unescape(form.group(1))) + "?" + urlencode({"a": "v0.30.0", **fields})
    diff = browser.dom(diff_url)
    assert "glm47 (tool): v0.30.0" in diff and 'class="add"' in diff and "stream each argument" in diff
    shoot(browser, diff_url, shots, "diff", 900)

    # the serve line: the reasoning parser of the same name; the shipped template is named beside it, not in it
    # (no documentation's flags give it: issue 39)
    line = html.unescape(re.search(r'<pre class="serve-cmd"><code>(.*?)</code></pre>', page, re.S).group(1))
    assert (
        line == "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser glm47 --reasoning-parser glm47"
    )
    assert "tool_chat_template_glm47.jinja" in page
    assert '<span class="paired-by" data-by="same name">' in page  # the page says which evidence paired them

    # a removed name's page says when it went
    gone_url = urljoin(base, "-/parser/tool/glm4_moe")
    gone = browser.dom(gone_url)
    banner = re.search(r'<div class="removed" role="note">(.*?)</div>', gone, re.S)
    assert banner and text(banner.group(1)).startswith(
        "glm4_moe is gone: removed in v0.32.0 (last registered in v0.31.0)."
    )
    shoot(browser, gone_url, shots, "removed", 1400)

    # where and check-doc, with links into the stored code
    where_url = urljoin(base, "-/where?" + urlencode({"q": "Glm47MoeModelToolParser"}))
    where = browser.dom(where_url)
    assert re.search(
        rf'<a class="tpindex-src" href="[^"]*/-/source/v0\.32\.0/{TP}/glm47_moe_tool_parser\.py#L{CLASS_LINE}"',
        where,
    )
    assert "v0.30.0" in text(where) and "v0.32.0" in text(where)
    shoot(browser, where_url, shots, "where", 700)
    check_url = urljoin(base, "-/check-doc?" + urlencode({"doc": DOC, "at": "v0.32.0"}))
    check = browser.dom(check_url)
    assert re.findall(r'<tr data-status="(\w+)"', check) and "wrong" not in re.findall(
        r'<tr data-status="(\w+)"', check
    )
    assert re.search(
        rf'<a class="tpindex-src" href="[^"]*/-/source/v0\.32\.0/{TP}/glm47_moe_tool_parser\.py', check
    )
    shoot(browser, check_url, shots, "check-doc", 900)
    # its chat template: the card lists it, linked to its stored text at that version (templates are in the
    # code store), the upstream link beside it; the source page shows the template's own lines
    row = re.search(r"<tr><th>chat templates</th><td>(.*?)</td></tr>", page, re.S).group(1)
    assert "examples/tool_chat_template_glm47.jinja" in text(row) and "exact, by name" in text(row)
    local = re.search(
        r'<a class="tpindex-src" href="([^"]*/-/source/v0\.32\.0/examples/tool_chat_template_glm47\.jinja)"',
        row,
    )
    assert local, row
    assert (
        'href="https://github.com/vllm-project/vllm/blob/v0.32.0/examples/tool_chat_template_glm47.jinja"'
        in row
    )
    template_url = urljoin(base, local.group(1))
    template = browser.dom(template_url)
    assert "is not stored" not in template and "tool_call" in text(template)
    shoot(browser, template_url, shots, "template", 900)
    assert all(p.stat().st_size > 5000 for p in shots.glob("walk-*.png"))
    # no page of the walk links upstream without a local link beside it
    walked = {
        "home": home,
        "find": found,
        "glm47": page,
        "source": source,
        "diff": diff,
        "removed": gone,
        "where": where,
        "check-doc": check,
        "template": template,
    }
    assert {k: upstream_without_local(v) for k, v in walked.items() if upstream_without_local(v)} == {}
