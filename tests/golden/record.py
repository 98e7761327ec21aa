"""Record the answers of the current code, so a change that must not change any output can be checked.

    python tests/golden/record.py OUT --db64 A.db [--tree-db T.db] [--fixture-db F.db]
    diff -r OUT_BEFORE OUT_AFTER

Run it with the code before the change (OUT_BEFORE) and after it (OUT_AFTER), on databases each built
by the code being recorded (`tpindex build --repo ... --db ...`), and compare the two directories: every
file must be byte-identical except what the change itself means to change. It asks the CLI in a
subprocess for every answer (which, card, diff, export, where, check-doc, grep, show, diff --code, log,
contains, diff --contract, check-plugin, versions, check, schema), writes `python -m indexer.schemas`'s
files, and the md5 of the stored result tables (ordered rows, version labels instead of ids).

It imports nothing of tpindex, so it runs unchanged across a re-layout of the package. The inputs it
writes (a plugin file, a Markdown document) are its own, written for this purpose.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TPINDEX = [str(Path(sys.executable).parent / "tpindex")]  # the entry point, wherever the CLI module lives

# the stored result tables and their primary keys (for the order of rows)
TABLES = {
    "parser_map": "kind, name",
    "parser_methods": "kind, name, role, method",
    "parser_code": "kind, name, path",
    "parser_attrs": "kind, name, role, attribute",
    "parser_hops": None,
}

# a tool parser plugin written here (not vLLM's code): it subclasses the abstract tool parser and
# registers itself the way the plugin documentation's era does
PLUGIN = """\
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("golden_probe")
class GoldenProbeToolParser(ToolParser):
    def __init__(self, tokenizer):
        super().__init__(tokenizer)

    def extract_tool_calls(self, model_output, request):
        raise NotImplementedError

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text,
                                     previous_token_ids, current_token_ids, delta_token_ids, request):
        return None
"""

# a pointer document written here: paths and symbols an operator's note would name, some wrong on purpose
DOC = """\
# Notes on tool calling

- The hermes parser is `vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py`.
- The newer home is `vllm/tool_parsers/hermes_tool_parser.py`.
- `Hermes2ProToolParser` handles `<tool_call>` blocks; `ToolParserManager` registers it.
- The reasoning parsers live in `vllm/reasoning/` and `DeepSeekR1ReasoningParser` is one.
- `vllm/does/not/exist.py` is a path that is wrong on purpose, and so is `NoSuchParserClass`.
"""


def run(args: list[str]) -> str:
    r = subprocess.run(
        TPINDEX + args,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "NO_COLOR": "1",
            "HOME": str(Path.home()),
            "COLUMNS": "120",
            "LANG": "C.UTF-8",
        },
    )
    return f"$ tpindex {' '.join(args)}\n[exit {r.returncode}]\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}"


def md5s(db: str) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out = []
    for table, key in TABLES.items():
        cols = [r[1] for r in con.execute(f"pragma table_info({table})") if r[1] != "version_id"]
        if not cols:
            continue
        order = ", ".join(["v.sort_key" if _has_sort_key(con) else "v.id", key or ", ".join(cols)])
        h = hashlib.md5()
        n = 0
        for row in con.execute(
            f"select v.label, {', '.join('t.' + c for c in cols)} from {table} t "
            f"join versions v on v.id = t.version_id order by {order}"
        ):
            h.update(repr(row).encode())
            n += 1
        out.append(f"{table}\t{n}\t{h.hexdigest()}")
    return "\n".join(out) + "\n"


def _has_sort_key(con) -> bool:
    return any(r[1] == "sort_key" for r in con.execute("pragma table_info(versions)"))


def questions(db: str, work: Path, newest: str, older: str, tree: bool) -> dict[str, list[str]]:
    d = ["--db", db]
    q = {
        "versions": ["versions"],
        "versions-json": ["versions", "--format", "json"],
        "check": ["check"],
    }
    if tree:
        q |= {
            "where-path": ["where", "vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py", "--all"],
            "where-symbol": ["where", "Hermes2ProToolParser", "--all"],
            "where-symbol-json": ["where", "Hermes2ProToolParser", "--all", "--format", "json"],
            "where-at": ["where", "ToolParserManager", "--at", newest],
            "where-missing": ["where", "NoSuchParserClass"],
            "check-doc": ["check-doc", str(work / "doc.md"), "--at", f"{older}..{newest}"],
            "check-doc-json": ["check-doc", str(work / "doc.md"), "--format", "json"],
            "check-doc-md": ["check-doc", str(work / "doc.md"), "--format", "markdown"],
        }
        return {k: v + d for k, v in q.items()}
    names = [
        "hermes",
        "mistral",
        "llama3_json",
        "qwen3_coder",
        "deepseek_r1",
        "qwen3",
        "pythonic",
        "nosuchname",
    ]
    for n in names:
        q[f"which-{n}"] = ["which", n]
        q[f"which-{n}-all"] = ["which", n, "--all"]
        q[f"which-{n}-json"] = ["which", n, "--format", "json", "--at", older]
        q[f"card-{n}"] = ["card", n]
        q[f"card-{n}-json"] = ["card", n, "--format", "json", "--at", older]
        q[f"card-{n}-md"] = ["card", n, "--format", "markdown"]
        q[f"show-{n}"] = ["show", n]
        q[f"show-{n}-method"] = ["show", n, "--method", "extract_tool_calls", "--format", "json"]
        q[f"log-{n}"] = ["log", n, older, newest]
        q[f"log-{n}-json"] = ["log", n, older, newest, "--format", "json", "--framework"]
        q[f"diff-code-{n}"] = ["diff", older, newest, "--code", n]
    for fmt in ("text", "json", "markdown"):
        q[f"card-all-{fmt}"] = ["card", "--all", "--format", fmt, "--at", older]
        q[f"diff-{fmt}"] = ["diff", older, newest, "--format", fmt]
        q[f"diff-first-last-{fmt}"] = ["diff", "v0.6.0", newest, "--format", fmt]
        q[f"diff-contract-{fmt}"] = ["diff", older, newest, "--contract", "--format", fmt]
        q[f"check-plugin-{fmt}"] = ["check-plugin", str(work / "plugin.py"), "--format", fmt]
    for fmt in ("json", "csv", "markdown"):
        q[f"export-{fmt}"] = ["export", "--at", older, "--format", fmt]
    q |= {
        "diff-code-path": ["diff", older, newest, "--code", "vllm/reasoning/abs_reasoning_parsers.py"],
        "diff-code-path-json": [
            "diff",
            older,
            newest,
            "--code",
            "vllm/reasoning/abs_reasoning_parsers.py",
            "--format",
            "json",
        ],
        "show-path": ["show", "vllm/reasoning/abs_reasoning_parsers.py:1-40", "--at", older],
        "show-path-json": ["show", "vllm/reasoning/abs_reasoning_parsers.py:10-20", "--format", "json"],
        "show-missing": ["show", "vllm/does/not/exist.py"],
        "grep": ["grep", "class .*ToolParser\\(", "--at", newest],
        "grep-all": ["grep", "register_module", "-F", "--path", "vllm/reasoning"],
        "grep-json": ["grep", "tool_call_start_token", "--tags", f"{older}..{newest}", "--format", "json"],
        "grep-bad": ["grep", "a(b", "--at", newest],
        "contains-tag": ["contains", newest],
        "contains-pr": ["contains", "#20000"],
        "contains-json": ["contains", "#12345", "--format", "json"],
        "which-bad-version": ["which", "hermes", "--at", "v9.9.9"],
        "card-typo": ["card", "herms"],
        "diff-bad": ["diff", older, "v9.9.9"],
    }
    return {k: v + d for k, v in q.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--db64", required=True, help="a database of many releases (no --tree needed)")
    p.add_argument("--tree-db", help="a --tree database of a few releases (where, check-doc)")
    p.add_argument(
        "--fixture-db", action="append", default=[], help="NAME=PATH: more databases (which, card, ...)"
    )
    p.add_argument("--newest", default="v0.33.0")
    p.add_argument("--older", default="v0.30.0")
    a = p.parse_args()
    out: Path = a.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    work = out / "_inputs"
    work.mkdir()
    (work / "plugin.py").write_text(PLUGIN)
    (work / "doc.md").write_text(DOC)
    sets = [("real", a.db64, False)]
    if a.tree_db:
        sets.append(("tree", a.tree_db, True))
    for spec in a.fixture_db:
        name, _, path = spec.partition("=")
        sets.append((name, path, False))
    for name, db, tree in sets:
        d = out / name
        d.mkdir()
        for key, args in questions(db, work, a.newest, a.older, tree).items():
            text = run(args).replace(str(work), "INPUTS").replace(db, "DB")
            (d / f"{key}.txt").write_text(text)
        (d / "tables.md5").write_text(md5s(db))
    # the JSON schemas: generated from the models, then every schema as `tpindex schema NAME` prints it
    subprocess.run([sys.executable, "-m", "indexer.schemas"], cwd=ROOT, check=True, capture_output=True)
    sdir = out / "schemas"
    sdir.mkdir()
    for f in sorted((ROOT / "indexer" / "schemas").glob("*.json")):
        shutil.copy(f, sdir / f.name)
    (out / "help.txt").write_text(
        "".join(
            run([c, "--help"])
            for c in [
                "build",
                "card",
                "check",
                "check-doc",
                "check-plugin",
                "contains",
                "diff",
                "export",
                "grep",
                "log",
                "mcp",
                "replay",
                "schema",
                "serve",
                "show",
                "versions",
                "where",
                "which",
            ]
        )
        + run(["--help"])
    )
    print(f"recorded {sum(1 for _ in out.rglob('*.txt'))} answers in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
