"""Uses: per definition of a file (a class body, a method, a module-level function, a module-level name, a
module-level import), its span, a digest of its code, and the module-level names its code reads or calls.
Resolution (indexer/logic.py `code_pieces`) follows these from a name's classes to the functions,
constants and imported helpers that run for it, and compares digests to tell what changed.

One row is `{what, qualname, line, end_line, digest, names}`:

- what: class (the class's own statements: its header, docstring and attributes; its methods are rows of
  their own), method (`Cls.meth`), function (module level), name (a module-level assignment target;
  targets assigned together share the row's span and digest), import (a name a module-level import binds);
- digest: of the definition's lines with blank and comment-only lines left out, so an edit to such a
  comment or a blank line is no change (a comment after code on its line is part of the line); an
  import's, of what it imports (level, module, name), so an import moved to another line is none either;
- names: the module-level bindings (definitions and imports) the code reads or calls, space-separated.
  Left out: attribute names after a dot, keyword-argument names, annotations, a class's bases (the
  resolution order follows those), the definition's own name, and in a function or method the names it
  binds itself (parameters, assignment and loop targets, imports inside it: its locals).

Functions and classes nested in a function belong to the function's row. Built from the facts the blob's
other kinds give (classes, module_defs, imports) and the tree parsed once: the bound names are found in the
file's bytes and taken to the tree (a pattern capturing every identifier costs twice as much: most are
locals, attributes and `self`); a name inside an annotation or a base list is told by walking up
from it (_unread) and left out.
"""

from __future__ import annotations

import functools
import hashlib
import re
from itertools import compress
from operator import and_, itemgetter, not_

from tree_sitter import Node

PARAMETER_PARENTS = frozenset(
    {"parameters", "lambda_parameters", "typed_parameter", "list_splat_pattern", "dictionary_splat_pattern"}
)
NAMED_PARENTS = frozenset(
    {
        "default_parameter",
        "typed_default_parameter",
        "keyword_argument",
        "function_definition",
        "class_definition",
    }
)  # whose `name` field is no read
IMPORT_PARENTS = frozenset({"dotted_name", "aliased_import"})  # a name an import inside a function binds
TARGET_PARENTS = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "as_pattern_target"})
BINDING_PARENTS = frozenset({"assignment", "augmented_assignment", "for_statement", "for_in_clause"})
STATEMENTS = frozenset({"block", "module", "function_definition", "decorated_definition"})  # with *_statement
SHORT = 4  # a bound name this short is searched with a pattern (_short_pattern)
MANY_NAMES = 64  # more bound names than this: one pass over the file's words finds them all (_named_once)
IN_NAME = [chr(b).isalnum() or b == 0x5F or b >= 0x80 for b in range(256)]
AFTER_NAME = [ok or b == 0x2E for b, ok in enumerate(IN_NAME)]  # a name after a dot is an attribute


_NO_CODE = (b"", b"#")  # what a blank or comment-only line starts with, once stripped
_FIRST = itemgetter(slice(0, 1))


def _code(lines: list[bytes], keep: list[bool], owner: list[int], index: int, line: int, end: int):
    """A definition's own lines (those of the definitions inside it left out), without blank and
    comment-only lines (keep: which lines are code). Iterated in C: a class's span holds its methods'."""
    chunk, code = lines[line - 1 : end], keep[line - 1 : end]
    mine = owner[line : line + len(chunk)]
    if mine.count(index) != len(chunk):
        code = map(and_, code, map(index.__eq__, mine))
    return compress(chunk, code)


def _digest(parts) -> str:
    return hashlib.sha1(b"\n".join(parts)).hexdigest()[:16]


def bound_names(facts: dict) -> set[str]:
    """The names a module binds at its top level: functions, names, module-level classes, imports."""
    names = {r[1] for r in facts.get("module_defs", [])}
    names |= {c["qualname"] for c in facts.get("classes", []) if c["nested_in"] == "module"}
    for imp in facts.get("imports", []):
        if imp["in_function"] is None and imp["in_class"] is None and not imp["star"]:
            names.add(_bound(imp))
    return names


def _bound(imp: dict) -> str:
    if imp["name"] is None:  # import a.b [as c]
        return imp["alias"] or imp["module"].split(".")[0]
    return imp["alias"] or imp["name"]


def extract(root: Node, facts: dict, data: bytes) -> list[dict]:
    """`data`: the bytes the tree was parsed from (the root node's text leaves out leading blank lines,
    which would shift every line and byte offset)."""
    lines = data.split(b"\n")
    pieces: list[dict] = []  # rows without digest and names yet
    seen: set[tuple[str, str]] = set()

    def piece(what: str, qualname: str, line: int, end: int, also: tuple[str, ...] = ()) -> int | None:
        if (what, qualname) in seen:
            return None  # defined twice: the first definition is the row (as in definitions.py)
        seen.add((what, qualname))
        pieces.append({"what": what, "qualname": qualname, "line": line, "end_line": end, "also": also})
        return len(pieces) - 1

    owner = [-1] * (len(lines) + 2)  # line -> index of the piece whose code it is

    def own(index: int | None, line: int, end: int) -> None:
        if index is not None:
            owner[line : end + 1] = [index] * (end + 1 - line)

    module_rows = facts.get("module_defs", [])
    for kind, qualname, line, end in module_rows:  # functions first: classes nested in one stay its code
        if kind == "function":
            own(piece("function", qualname, line, end), line, end)
    spans: dict[tuple[int, int], list[str]] = {}
    for kind, qualname, line, end in module_rows:
        if kind == "name":
            spans.setdefault((line, end), []).append(qualname)
    for (line, end), targets in spans.items():
        own(piece("name", targets[0], line, end, tuple(targets[1:])), line, end)
    for c in sorted(facts.get("classes", []), key=lambda c: c["line"]):  # outer classes before nested ones
        if "<locals>" in c["qualname"]:
            continue
        own(piece("class", c["qualname"], c["line"], c["end_line"]), c["line"], c["end_line"])
        for m in c["methods"]:
            own(
                piece("method", f"{c['qualname']}.{m['name']}", m["line"], m["end_line"]),
                m["line"],
                m["end_line"],
            )
    refs: list[set[str]] = [set() for _ in pieces]
    local: list[set[str]] = [set() for _ in pieces]
    whole = root.has_error
    for node in _named(root, data, bound_names(facts)):
        o = owner[node.start_point.row + 1]
        if o < 0:
            continue
        role = _role(node)
        if role == "bind":
            local[o].add(node.text.decode())
        elif role == "read" and not _unread(node, whole):
            refs[o].add(node.text.decode())
    for i, p in enumerate(pieces):
        if p["what"] in ("function", "method"):
            refs[i] -= local[i]  # a name a function binds is its local wherever it is read
    keep = list(
        map(not_, map(_NO_CODE.__contains__, map(_FIRST, map(bytes.lstrip, lines))))
    )  # a line of code
    out = []
    for i, p in enumerate(pieces):
        names = " ".join(sorted(refs[i] - {p["qualname"], *p["also"]}))
        digest = _digest(_code(lines, keep, owner, i, p["line"], p["end_line"]))
        for qualname in (p["qualname"], *p["also"]):
            out.append(
                {
                    "what": p["what"],
                    "qualname": qualname,
                    "line": p["line"],
                    "end_line": p["end_line"],
                    "digest": digest,
                    "names": names,
                }
            )
    for imp in facts.get("imports", []):
        if imp["in_function"] is None and imp["in_class"] is None and not imp["star"]:
            name = _bound(imp)
            if ("import", name) in seen:
                continue
            seen.add(("import", name))
            what = f"{imp['level']}|{imp['module']}|{imp['name'] or ''}".encode()
            out.append(
                {
                    "what": "import",
                    "qualname": name,
                    "line": imp["line"],
                    "end_line": imp.get("end_line", imp["line"]),
                    "digest": _digest([what]),
                    "names": "",
                }
            )
    return out


def _named(root: Node, data: bytes, bound: set[str]):
    """The identifier nodes spelling one of `bound`: each occurrence of a bound name in the file's bytes
    not inside a longer word and not after a dot, taken to the tree (a word in a string or a comment is
    no identifier there). A short name (`re`, `json`) is inside many longer words: a pattern finds it; a
    longer one, bytes.find."""
    end = len(data)
    if len(bound) > MANY_NAMES:  # one pass over the file's words: a pass per name is quadratic in a file
        yield from _named_once(root, data, bound)  # binding 100k names (264 s for 100k assignments)
        return
    for name in bound:
        if len(name) <= SHORT:
            spans = (m.span() for m in _short_pattern(name).finditer(data))
        else:
            spans = _spans_of(data, name.encode(), end)
        for i, j in spans:
            if i and AFTER_NAME[data[i - 1]]:
                continue
            node = root.descendant_for_byte_range(i, j)
            if node is not None and node.type == "identifier" and node.start_byte == i and node.end_byte == j:
                yield node


_WORD = re.compile(rb"[\w\x80-\xff]+")  # a run of name characters (what IN_NAME holds)


def _named_once(root: Node, data: bytes, bound: set[str]):
    """_named in one pass over the words of the file: each run of name characters that is a bound name and
    does not follow a dot."""
    wanted = {name.encode() for name in bound}
    for m in _WORD.finditer(data):
        i, j = m.span()
        if m[0] not in wanted or (i and data[i - 1] == 0x2E):
            continue
        node = root.descendant_for_byte_range(i, j)
        if node is not None and node.type == "identifier" and node.start_byte == i and node.end_byte == j:
            yield node


def _spans_of(data: bytes, word: bytes, end: int):
    size = len(word)
    i = data.find(word)
    while i >= 0:
        j = i + size
        if j >= end or not IN_NAME[data[j]]:
            yield i, j
        i = data.find(word, j)


@functools.lru_cache(maxsize=1024)
def _short_pattern(name: str) -> re.Pattern:
    """The name not followed by a word character (what precedes it is checked by the caller: a look-behind
    makes the search test every position)."""
    return re.compile(re.escape(name.encode()) + rb"(?![\w\x80-\xff])")


def _role(node: Node) -> str | None:
    """What a bare name does here, as its parent says: "read" (read or called), "bind" (a parameter, an
    assignment's or a loop's target, a name an import inside a function binds: a local of the function
    there), None (an attribute after a dot, a keyword argument's name, a definition's own name)."""
    parent = node.parent
    if parent is None:
        return None
    kind = parent.type
    prev = node.prev_sibling
    if prev is not None and prev.type == ".":
        return None  # x.name
    if kind in PARAMETER_PARENTS or kind in IMPORT_PARENTS or kind in TARGET_PARENTS:
        return "bind"
    if kind in NAMED_PARENTS and parent.child_by_field_name("name") == node:
        return "bind" if kind in ("default_parameter", "typed_default_parameter") else None
    if kind in BINDING_PARENTS and parent.child_by_field_name("left") == node:
        return "bind"
    return "read"


def _unread(node: Node, whole: bool) -> bool:
    """Whether a name written in code is no read of it at run time: inside an annotation (a `type` node: a
    parameter's, a return's, an assignment's), or in a class's base list (the resolution order follows bases).

    Both hold only expressions: in a tree without errors neither has a statement or a block inside, so the
    walk up (each `parent` costs a descent from the root) stops at the first one; `whole` (a tree with
    errors, whose error nodes may nest anything): it goes to the root."""
    child, parent = node, node.parent
    while parent is not None:
        kind = parent.type
        if kind == "type":
            return True
        if kind == "class_definition":
            if child.type == "argument_list" and parent.child_by_field_name("superclasses") == child:
                return True
            if not whole:
                return False
        elif not whole and (kind in STATEMENTS or kind.endswith("_statement")):
            return False
        child, parent = parent, parent.parent
    return False
