"""Canned queries: one `.sql` file per question under queries/canned/, served by Datasette.

A file starts with a comment header:

    -- Title: what the query answers (the rest of the first line is the start of the description).
    -- :version  a version label, e.g. v0.32.0 (blank: the newest indexed)
    -- Further comment lines continue the description.

`-- :param  text` lines document the parameters, in the order the form shows them. The file's stem is
the query's name (its URL: /<database>/<stem>); it must differ from every table and view name, which
the query would hide.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

# The order of the questions on the home page; files not listed follow, by name.
ORDER = (
    "which",
    "history",
    "name_lifecycle",
    "names_changed",
    "parsers_by_impl",
    "reasoning_parsers",
    "adapter_importers",
    "class_tree",
    "class_attribute",
    "method_overrides",
    "marker_sites",
    "plants_by_version",
)

_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)\.\s")
_PARAM = re.compile(r"^:([A-Za-z_]\w*)\s*(.*)$")


@dataclass
class Canned:
    name: str
    title: str
    description: str
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, help)
    sql: str = ""

    def description_html(self) -> str:
        out = f"<p>{html.escape(self.description)}</p>" if self.description else ""
        if self.params:
            items = "".join(
                f"<li><code>{html.escape(n)}</code> {html.escape(h)}</li>" for n, h in self.params
            )
            out += f'<ul class="tpindex-params">{items}</ul>'
        return out

    def datasette(self) -> dict:
        return {
            "sql": self.sql,
            "title": self.title,
            "description": self.description,
            "summary": self.summary(),
            "description_html": self.description_html(),
            "params": [n for n, _ in self.params],
            "hide_sql": True,
        }

    def summary(self) -> str:
        """The description's first sentence."""
        m = _SENTENCE_END.search(self.description)
        return self.description[: m.start() + 1] if m else self.description


def canned_dir() -> Path:
    here = Path(__file__).resolve().parent.parent  # indexer/
    for candidate in (here / "queries" / "canned", here.parent / "queries" / "canned"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("tpindex's queries/canned/ directory is missing from the installation")


def parse(name: str, text: str) -> Canned:
    header: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("--"):
            break
        header.append(s[2:].rstrip())
    first = header[0].strip() if header else name
    title, sep, rest = first.partition(": ")
    if not sep:
        title, rest = first.rstrip("."), ""
    desc = [rest] if rest else []
    params: list[tuple[str, str]] = []
    last_was_param = False
    for raw in header[1:]:
        line = raw.strip()
        m = _PARAM.match(line)
        if m:
            params.append((m.group(1), m.group(2)))
            last_was_param = True
        elif last_was_param and raw.startswith("   ") and line:  # a parameter's help wrapped, indented
            params[-1] = (params[-1][0], f"{params[-1][1]} {line}")
        else:
            last_was_param = False
            if line:
                desc.append(line)
    description = " ".join(desc).strip()
    description = description[:1].upper() + description[1:]
    return Canned(name=name, title=title.strip(), description=description, params=params, sql=text)


def load(directory: Path | None = None) -> list[Canned]:
    directory = directory or canned_dir()
    found = {p.stem: parse(p.stem, p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.sql"))}
    ordered = [found.pop(n) for n in ORDER if n in found]
    return ordered + list(found.values())
