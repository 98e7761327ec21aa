"""Cells that link: every parser name to its page, every class to the class tree at the row's version,
every version to its page, and a `notes` JSON list as a list. Used by the plugin's render_cell hook for
tables, views and canned queries alike (file columns link upstream, in links.py).

- a name: the `name` column of a row whose `kind` is tool, reasoning or engine, and the comma-separated
  names of `alias_of` (and of COLUMN_KINDS columns, whatever the row's kind);
- a class: CLASS_COLUMNS, when the row has a version (`version`, else `last_version`);
- a version: VERSION_COLUMNS, and the comma-separated lists of VERSION_LIST_COLUMNS, when the value is an
  indexed version.
"""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

from markupsafe import Markup, escape

KINDS = ("tool", "reasoning", "engine")
CLASS_COLUMNS = {
    "class",
    "real_class",
    "reg_class",
    "defining_class",
    "wrapper_class",
    "parent_class",
    "base",
    "real_class_a",
    "real_class_b",
}
VERSION_COLUMNS = {"version", "first_version", "last_version", "became_unified", "removed_in", "a", "b"}
VERSION_LIST_COLUMNS = {"real_file_changed_in", "code_changed_in"}
NAME_LIST_COLUMNS = {"alias_of"}
# columns holding names of one kind whatever the row's kind (the reasoning_parsers question's tool parsers; the
# names whose own code holds a plant or a marker)
COLUMN_KINDS = {"tool_parsers": "tool", "reasoning_parser_names": "reasoning"}
COLUMNS = (
    CLASS_COLUMNS
    | VERSION_COLUMNS
    | VERSION_LIST_COLUMNS
    | NAME_LIST_COLUMNS
    | set(COLUMN_KINDS)
    | {"name", "notes", "adapter"}
)


class Urls:
    """The browser's own pages, under Datasette's base URL."""

    def __init__(self, datasette, database: str, several: bool = False, stored: dict | None = None):
        self.ds, self.database, self.several = datasette, database, several
        self.stored = stored or {}  # version -> the paths whose code is stored (answers.source.stored_paths)

    def _db(self, params: dict) -> dict:
        return {**params, "db": self.database} if self.several else params

    def parser(self, kind: str, name: str, version: str | None = None) -> str:
        q = urlencode(self._db({"v": version} if version else {}))
        return self.ds.urls.path(f"-/parser/{quote(kind, safe='')}/{quote(name, safe='')}") + (
            f"?{q}" if q else ""
        )

    def version(self, label: str) -> str:
        q = urlencode(self._db({}))
        return self.ds.urls.path(f"-/version/{quote(label, safe='')}") + (f"?{q}" if q else "")

    def find(self, q: str) -> str:
        return self.ds.urls.path("-/find") + "?" + urlencode(self._db({"q": q}))

    def fit(self) -> str:
        """/-/fit (a form posts to it)."""
        q = urlencode(self._db({}))
        return self.ds.urls.path("-/fit") + (f"?{q}" if q else "")

    def source(self, version: str, path: str, line: int | None = None) -> str:
        q = urlencode(self._db({}))
        return (
            self.ds.urls.path(f"-/source/{quote(version, safe='')}/{quote(path)}")
            + (f"?{q}" if q else "")
            + (f"#L{line}" if line else "")
        )

    def code(self, version: str, path: str | None, line: int | None = None) -> str | None:
        """The local source page of path at version (at the line); None when its code is not stored there."""
        if not path or path not in self.stored.get(version, ()):
            return None
        return self.source(version, path, line)

    def diff(
        self, a: str, b: str, name: str | None = None, kind: str | None = None, path: str | None = None
    ) -> str:
        """The local diff of a name's code (name, kind) or of one file (path) from version a to b."""
        args = {"a": a, "b": b, **{k: v for k, v in (("name", name), ("kind", kind), ("path", path)) if v}}
        return self.ds.urls.path("-/diff") + "?" + urlencode(self._db(args))

    def atlas(self, name: str | None = None, version: str | None = None) -> str:
        """The behaviour atlas's page (/-/atlas): a name's row at a version, or the matrix of names starting so."""
        args = {"name": name, "version": version} if version else ({"prefix": name} if name else {})
        q = urlencode(self._db(args))
        return self.ds.urls.path("-/atlas") + (f"?{q}" if q else "")

    def class_tree(self, cls: str, version: str) -> str:
        return (
            self.ds.urls.query(self.database, "class_tree")
            + "?"
            + urlencode({"version": version, "class": cls})
        )


def page_name(request) -> str | None:
    """The canned query (or table) a page shows: the last path segment, without a format extension."""
    if request is None:
        return None
    last = request.path.rstrip("/").rsplit("/", 1)[-1]
    return last.split(".", 1)[0] or None


def _a(href: str, text: str, cls: str, title: str | None = None) -> Markup:
    if title:
        return Markup('<a class="{}" href="{}" title="{}">{}</a>').format(cls, href, title, text)
    return Markup('<a class="{}" href="{}">{}</a>').format(cls, href, text)


def _breakable(cls: str) -> Markup:
    """A long class name that may wrap where a word starts (Glm47MoeParser<wbr>ReasoningAdapter), and a long
    dotted name after a dot (ToolParser.<wbr>__init_subclass__)."""
    import re

    if len(cls) < 20:
        return escape(cls)
    return Markup("<wbr>").join(escape(p) for p in re.split(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=\.)", cls))


breakable_class = _breakable


def breakable_path(path: str) -> Markup:
    """A path that may wrap after a slash, and a long file or directory name (20 characters or more) after an
    underscore too (glm47_moe_<wbr>tool_<wbr>parser.py), so that a narrow file column stays narrow."""

    def part(p: str) -> Markup:
        if len(p) < 20:
            return escape(p)
        return Markup("_<wbr>").join(escape(x) for x in p.split("_"))

    return Markup("/<wbr>").join(part(p) for p in str(path).split("/"))


def _list(values: str, one) -> Markup:
    parts = [p.strip() for p in values.split(",")]
    return Markup(", ").join(one(p) if p else escape(p) for p in parts)


def render(row, value, column: str, labels: set[str], urls: Urls) -> Markup | None:
    """A linked cell, or None to leave the cell to Datasette (and the file-link hook)."""
    if not isinstance(value, str) or not value or not hasattr(row, "keys"):
        return None
    keys = set(row.keys())
    version = (
        row["version"] if "version" in keys else (row["last_version"] if "last_version" in keys else None)
    )
    version = version if isinstance(version, str) and version in labels else None
    kind = row["kind"] if "kind" in keys and row["kind"] in KINDS else None
    if column == "name" and kind in KINDS:
        return _a(urls.parser(kind, value, version), value, "tpindex-name", f"{value} ({kind} parser)")
    list_kind = COLUMN_KINDS.get(column) or (kind if column in NAME_LIST_COLUMNS else None)
    if column != "name" and list_kind in KINDS:
        return _list(value, lambda n: _a(urls.parser(list_kind, n, version), n, "tpindex-name"))
    if column in CLASS_COLUMNS and version and value.replace(".", "").replace("_", "").isalnum():
        return _a(
            urls.class_tree(value, version),
            _breakable(value),
            "tpindex-class",
            f"class tree of {value} at {version}",
        )
    if column == "adapter":  # a generated class (make_adapters), no class tree: a long name may wrap
        return _breakable(value)
    if column in VERSION_COLUMNS and value in labels:
        return _a(urls.version(value), value, "tpindex-version")
    if column in VERSION_LIST_COLUMNS:
        return _list(value, lambda v: _a(urls.version(v), v, "tpindex-version") if v in labels else escape(v))
    if column == "notes" and value.startswith("["):
        try:
            notes = json.loads(value)
        except ValueError:
            return None
        if isinstance(notes, list) and all(isinstance(n, str) for n in notes):
            return Markup('<ul class="tpindex-notes">{}</ul>').format(
                Markup("").join(Markup("<li>{}</li>").format(n) for n in notes)
            )
    return None
