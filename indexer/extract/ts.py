"""tree-sitter plumbing: the Python language, one parser per process, and the pattern files.

Pattern files live in the top-level `queries/` directory of the project; an installed wheel carries
them as `indexer/queries/`.
"""

from __future__ import annotations

import bisect
import functools
from typing import TYPE_CHECKING

from .paths import queries_dir

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Query

# tree-sitter is imported at the first parse or query, not with this module: the read-only commands use
# the helpers below on no tree (resolve imports them), and its import is a fifth of their start-up.


@functools.cache
def language() -> Language:
    import tree_sitter_python
    from tree_sitter import Language

    return Language(tree_sitter_python.language())


def _ts(name: str):
    """tree_sitter's `name` (Query, QueryCursor), imported on first use and kept as this module's attribute
    (a test may replace it there)."""
    found = globals().get(name)
    if found is None:
        import tree_sitter

        found = globals()[name] = getattr(tree_sitter, name)
    return found


def __getattr__(name: str):
    if name == "LANGUAGE":  # the language, made on first use
        return language()
    if name in ("Query", "QueryCursor"):
        return _ts(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def parser() -> Parser:
    from tree_sitter import Parser

    return Parser(language())


def _rel(name: str) -> str:
    return name if "/" in name else f"patterns/{name}"


class Pattern:
    """A pattern file, compiled on its own only when it runs on its own cursor: a primed tree has its
    matches from the combined query (compiling every file alone as well cost each process ~0.06 CPU-s)."""

    def __init__(self, rel: str):
        self.rel = rel

    @functools.cached_property
    def compiled(self) -> Query:
        return _ts("Query")(language(), (queries_dir() / self.rel).read_text())


@functools.cache
def query(name: str) -> Pattern:
    """A pattern file under queries/patterns/ (or a path relative to queries/)."""
    return Pattern(_rel(name))


@functools.cache
def pattern_files() -> tuple[str, ...]:
    """Every pattern file, relative to queries/."""
    return tuple(sorted(p.relative_to(queries_dir()).as_posix() for p in queries_dir().rglob("*.scm")))


def combined() -> tuple[Query, tuple[str, ...]]:
    """Every pattern file in one query, and the file each pattern index comes from. Running one cursor over
    a tree visits it once, however many pattern files there are."""
    return _combined(pattern_files())


@functools.cache
def _texts(files: tuple[str, ...]) -> tuple[bytes, ...]:
    """The pattern files' texts, read once per process (the combined query and patterns() both need them)."""
    return tuple((queries_dir() / rel).read_text().encode() for rel in files)


@functools.cache
def _combined(files: tuple[str, ...]) -> tuple[Query, tuple[str, ...]]:
    texts = _texts(files)
    starts, at = [], 0  # where each file's text begins in the joined source
    for t in texts:
        starts.append(at)
        at += len(t) + 1
    q = _ts("Query")(language(), b"\n".join(texts).decode())
    owner = tuple(
        files[bisect.bisect_right(starts, q.start_byte_for_pattern(i)) - 1] for i in range(q.pattern_count)
    )
    return q, owner


@functools.cache
def patterns() -> tuple[tuple[str, str], ...]:
    """Every pattern of every pattern file, in order: (its file, its text). A query of some of them, in this
    order, gives each file's matches as the query of every file does for the patterns it holds (a query's
    compile is mostly the same whatever its patterns: a blob's extraction picks one of a few, extract/facts.py)."""
    q, owner = combined()
    source = b"\n".join(_texts(pattern_files()))
    return tuple(
        (owner[i], source[q.start_byte_for_pattern(i) : q.end_byte_for_pattern(i)].decode())
        for i in range(q.pattern_count)
    )


_SELECTED: dict[tuple[int, ...], tuple[Query, tuple[str, ...]]] = {}


def selected(chosen: tuple[int, ...]) -> tuple[Query, tuple[str, ...]]:
    """The patterns at these indexes of patterns() in one query, and the file each of its patterns comes
    from; compiled once per process for each selection (every pattern: the query of every file)."""
    found = _SELECTED.get(chosen)
    if found is None:
        every = patterns()
        if len(chosen) == len(every):
            found = combined()
        else:
            q = _ts("Query")(language(), "\n".join(every[i][1] for i in chosen))
            found = q, tuple(every[i][0] for i in chosen)
        _SELECTED[chosen] = found
    return found


def compiled(chosen: tuple[int, ...]) -> bool:
    """Whether the query of these patterns is compiled in this process already."""
    return chosen in _SELECTED


def _clear() -> None:
    _combined.cache_clear()
    _texts.cache_clear()
    _SELECTED.clear()
    patterns.cache_clear()
    pattern_files.cache_clear()


combined.cache_clear = _clear  # type: ignore[attr-defined]


def _cursor(q: Query):
    return _ts("QueryCursor")(q)


class _Primed:
    root: Node | None = None
    found: dict[str, list[dict[str, list[Node]]]] = {}
    files: frozenset[str] = frozenset()


def prime(root: Node, chosen: tuple[int, ...], files: frozenset[str]) -> None:
    """Run the patterns at these indexes of patterns() over a tree in one pass; matches()/captures() of a
    pattern file of `files` on this root then read the result: the matches of its chosen patterns (a pattern
    left out is one whose matches give the file's kind nothing in this blob). A file not in `files` runs on
    its own cursor when asked."""
    found: dict[str, list] = {}
    if chosen:  # none chosen (no pattern's words in the blob): no walk, every file's matches empty
        q, owner = selected(chosen)
        for index, caps in _cursor(q).matches(root):
            found.setdefault(owner[index], []).append(caps)
    _Primed.root, _Primed.found, _Primed.files = root, found, files


def unprime() -> None:
    _Primed.root, _Primed.found, _Primed.files = None, {}, frozenset()


def _primed(q: Pattern, node: Node) -> bool:
    return _Primed.root is not None and q.rel in _Primed.files and node == _Primed.root


def matches(q: Pattern, node: Node) -> list[dict[str, list[Node]]]:
    if _primed(q, node):
        return _Primed.found.get(q.rel, [])
    return [caps for _, caps in _cursor(q.compiled).matches(node)]


def captures(q: Pattern, node: Node) -> dict[str, list[Node]]:
    if _primed(q, node):
        merged: dict[str, list[Node]] = {}
        for caps in _Primed.found.get(q.rel, []):
            for name, nodes in caps.items():
                merged.setdefault(name, []).extend(nodes)
        for nodes in merged.values():
            nodes.sort(key=lambda n: n.start_byte)
        return merged
    return _cursor(q.compiled).captures(node)


def text(node: Node | None) -> str:
    if node is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def line(node: Node) -> int:
    return node.start_point.row + 1


def string_value(node: Node | None) -> str | None:
    """The value of a plain string literal ('x', "x", no f-string interpolation), else None."""
    if node is None or node.type != "string":
        return None
    parts = []
    for child in node.named_children:
        if child.type == "interpolation":
            return None
        if child.type in ("string_content", "escape_sequence"):
            parts.append(text(child))
    return "".join(parts)


def enclosing(node: Node) -> tuple[str | None, str | None]:
    """Qualified names of the innermost enclosing class and function ("A.B", "f.<locals>.g")."""
    cls = fn = None
    n = node.parent
    while n is not None:
        if n.type == "class_definition" and cls is None:
            cls = qualname(n)
        elif n.type == "function_definition" and fn is None:
            fn = qualname(n)
        n = n.parent
    return cls, fn


def qualname(defn: Node) -> str:
    """Python's __qualname__ for a class or function definition node."""
    parts = [text(defn.child_by_field_name("name"))]
    n = defn.parent
    while n is not None:
        if n.type == "class_definition":
            parts.append(text(n.child_by_field_name("name")))
        elif n.type == "function_definition":
            parts.append("<locals>")
            parts.append(text(n.child_by_field_name("name")))
        n = n.parent
    return ".".join(reversed(parts))
