"""The advice on real releases (issue 39), network: v0.30.0..v0.32.0 from the package index (`real_db`).

1. Every model family of v0.32.0's reasoning table that also has a tool-calling section gets the documented pair
   from `fit --model FAMILY`: the table's reasoning parser, and a tool parser that section names. Both pages are
   read here from the release archive at test time (never committed), by a reading of their own, simpler than
   tpindex's: a row's family (its first cell without links, the words series, models, language dropped) and its
   linked model; a section belongs to a family when its heading (without code spans and the word Models) starts
   the family's name, or its text holds the family's name or the linked model's, all compared lower case with
   only letters and digits; the tool parsers it names are its heading's code spans and its `--tool-call-parser`
   flags. The table (family, pair, evidence, proof) is printed (pytest -s) for the issue's closing note.
2. A thinking ChatML template written for these tests (tests/fixtures/templates/) gets hermes and qwen3, proven
   (`proof.ok`), at v0.30.0 and at v0.32.0.
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path, PurePosixPath

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network

AT = "v0.32.0"
CHATML = Path(__file__).parent / "fixtures" / "templates" / "thinking_chatml.jinja"
GENERIC = {"series", "models", "model", "language"}


def pages(source, label: str) -> dict[str, str]:
    path, _ = source.archive(label)
    out = {}
    with tarfile.open(path) as tar:
        for m in tar:
            rel = str(PurePosixPath(*PurePosixPath(m.name).parts[1:]))
            if m.isfile() and rel in ("docs/features/tool_calling.md", "docs/features/reasoning_outputs.md"):
                out[rel.rsplit("/", 1)[1]] = tar.extractfile(m).read().decode("utf-8")
    return out


def key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", " ".join(w for w in text.lower().split() if w not in GENERIC))


def table(doc: str) -> list[tuple[str, str | None, str]]:
    """(family, linked model's name or None, reasoning parser) of each row of the model table."""
    rows, lines = [], doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|") and "Parser" in line)
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break  # the first table only
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        link = re.search(r"\[([^\]]+)\]\(([^)]+)\)", cells[0])
        family = link.group(1) if link else cells[0]
        model = (
            re.search(r"huggingface\.co/(?!collections/)[\w.-]+/([\w.-]+)", link.group(2)) if link else None
        )
        rows.append((family, model.group(1) if model else None, re.search(r"`([^`]+)`", cells[1]).group(1)))
    return rows


def sections(doc: str) -> list[tuple[str, str, set[str]]]:
    """(heading key, text key, tool parsers named) of each section of the tool-calling page."""
    out, heading, body = [], None, []
    for line in doc.splitlines() + ["# end"]:
        if line.startswith("#"):
            if heading is not None:
                names = set(re.findall(r"`([\w-]+)`", heading)) | set(
                    re.findall(r"--tool-call-parser[ =]+([\w.-]+)", "\n".join(body))
                )
                plain = re.sub(r"`[^`]*`|\([^)]*\)", " ", heading.lstrip("# "))
                out.append((key(plain), key(heading + " " + " ".join(body)), names))
            heading, body = line, []
        else:
            body.append(line)
    return out


def documented_tools(family: str, model: str | None, secs) -> set[str]:
    fam = key(family)
    found = set()
    for head, text, names in secs:
        if (head and fam.startswith(head)) or fam in text or (model and key(model) in text):
            found |= names
    return found


def test_every_reasoning_family_with_a_tool_section_gets_the_documented_pair(real_db, pypi):
    docs = pages(pypi, AT)
    rows, secs = table(docs["reasoning_outputs.md"]), sections(docs["tool_calling.md"])
    assert len(rows) >= 10 and len(secs) >= 20  # what the pages hold; the rest is measured
    report, misses, checked = [], [], 0
    for family, model, reasoning in rows:
        tools = documented_tools(family, model, secs)
        r = tpindex("fit", "--model", family, "--at", AT, "--format", "json", "--db", real_db, ok=False)
        ans = json.loads(r.stdout) if r.exit_code == 0 else None
        pair = (ans["pair"]["tool"], ans["pair"]["reasoning"]) if ans else (None, None)
        proof = ans["proof"] if ans else None
        said = "not run" if not proof or proof["ok"] is None else "ok" if proof["ok"] else "FAILS"
        lines = (ans.get("documented") or {}).get("evidence", []) if ans else []
        evidence = ", ".join(f"{e['file'].rsplit('/', 1)[1]}:{e['line']}" for e in lines) or (
            "; ".join(f"{e['kind']}: {e['text'][:60]}" for e in ans["pair"]["evidence"])
            if ans
            else r.output.strip()
        )
        if proof and proof["ok"] is False:
            said += (
                " ("
                + next(
                    f"{o['what']}, {m['mode']}: {m['why']}"
                    for o in proof["outputs"]
                    for m in o["modes"]
                    if not m["ok"]
                )
                + ")"
            )
        elif proof and proof["ok"] is None:
            said += f" ({proof['skipped'][:70]})"
        report.append(
            f"  {family:34} {'/'.join(sorted(tools)) or '(no tool section)':40} -> {pair[0]} + {pair[1]}"
            f"  proof {said}  [{evidence}]"
        )
        if not tools:
            continue
        checked += 1
        if pair[1] != reasoning or pair[0] not in tools:
            misses.append((family, sorted(tools), reasoning, pair))
    print(f"fit --model at {AT}: {checked} families of the reasoning table have a tool-calling section")
    print("\n".join(report))
    assert checked >= 8 and not misses, misses


@pytest.mark.parametrize("at", ["v0.30.0", "v0.32.0"])
def test_a_thinking_chatml_template_gets_hermes_and_qwen3_proven(real_db, at):
    r = tpindex("fit", CHATML, "--at", at, "--format", "json", "--db", real_db)
    ans = json.loads(r.stdout)
    assert (ans["pair"]["tool"], ans["pair"]["reasoning"]) == ("hermes", "qwen3")
    assert ans["proof"]["ok"] is True and (ans["proof"]["tool"], ans["proof"]["reasoning"]) == (
        "hermes",
        "qwen3",
    )
    assert ans["serve"].startswith(
        "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3"
    )
    for o in ans["proof"]["outputs"]:
        assert all(m["ok"] for m in o["modes"]) and len(o["modes"]) == 4
    print(at, ans["verdict"])
