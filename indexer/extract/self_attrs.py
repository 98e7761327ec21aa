"""Self attributes: per method of a class, the instance attributes it binds (`self.x = ...`) and those it reads
(`self.x` anywhere else), from queries/patterns/self_attrs.scm. Resolution reads them to find an overriding
`__init__` that rebinds what the parsing methods read (a subclass that swaps its base's regular expressions or
tokens: part of where the logic is, README "Where the parsing code is").

One row per (class, method, attribute, how):

- how `binds`: the method assigns the attribute (a plain or annotated assignment, or a target of a tuple
  assignment) after its last `super().<same method>(...)` call, or anywhere when it makes none: a binding the
  base's method would bind again is not one that stands. `line`: the last such assignment;
- how `reads`: any other use of `self.x` in the method (an augmented assignment reads it too). `line`: the first.

Code in a function nested in a method (or a lambda) counts for the method; a class nested in a method is its
own class. Parser packages only (scope.FULL), as the other facts a parser's code gives.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from .ts import captures, line, query

_SUPER_CALL = re.compile(rb"\bsuper\([^)]*\)\s*\.\s*([A-Za-z_]\w*)\s*\(")
_TARGETS = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "parenthesized_expression"})


def _members(defs: list[Node]) -> dict[int, Node]:
    """Of the classes and functions (in order of their start), each function that is a method (defined in a
    class body, decorated or not), by its start byte -> its class."""
    out = {}
    for d in defs:
        if d.type != "function_definition":
            continue
        body = d.parent
        if body is not None and body.type == "decorated_definition":
            body = body.parent
        cls = body.parent if body is not None and body.type == "block" else None
        if cls is not None and cls.type == "class_definition":
            out[d.start_byte] = cls
    return out


def _methods_of(uses: list[Node], defs: list[Node]) -> list[Node | None]:
    """The method each use (in order of their start) is in, as Python scopes read it: the outermost function
    below the innermost class around the use, when that function is a method of that class (code in a function
    nested in a method counts for the method; a class nested in a method is its own class). One sweep over the
    definitions' spans, not a walk up from each use (each `parent` is a descent from the root)."""
    members = _members(defs)
    out: list[Node | None] = []
    open_: list[Node] = []  # the definitions around the sweep's position, outermost first
    i, n = 0, len(defs)
    for use in uses:
        at = use.start_byte
        while i < n and defs[i].start_byte <= at:
            while open_ and open_[-1].end_byte <= defs[i].start_byte:
                open_.pop()
            open_.append(defs[i])
            i += 1
        while open_ and open_[-1].end_byte <= at:
            open_.pop()
        found = None
        method = None
        for d in reversed(open_):
            if d.type == "function_definition":
                found = d
            else:  # the innermost class
                cls = members.get(found.start_byte) if found is not None else None
                method = found if cls is not None and cls.start_byte == d.start_byte else None
                break
        out.append(method)
    return out


def _binds(use: Node) -> bool:
    """Whether `self.x` is (part of) the left side of an assignment."""
    n, parent = use, use.parent
    while parent is not None and parent.type in _TARGETS:
        n, parent = parent, parent.parent
    return parent is not None and parent.type == "assignment" and parent.child_by_field_name("left") == n


def _last_super(method: Node, name: str) -> int:
    """The byte offset of the method's last `super().<name>(` call, -1 when it makes none."""
    body = method.child_by_field_name("body")
    if body is None or b"super(" not in body.text:
        return -1
    ends = [m.start() for m in _SUPER_CALL.finditer(body.text) if m.group(1).decode() == name]
    return body.start_byte + ends[-1] if ends else -1


def extract(root: Node) -> list[dict]:
    found: dict[tuple[str, str, str, str], int] = {}
    methods: dict[int, tuple[str, str, int] | None] = {}  # method start byte -> (class, method, super offset)
    caps = captures(query("self_attrs.scm"), root)
    uses = caps.get("use", [])
    for use, meth in zip(uses, _methods_of(uses, caps.get("def", [])), strict=True):
        if meth is None:
            continue
        where = methods.get(meth.start_byte)
        if where is None:
            cls = meth.parent.parent if meth.parent.type == "block" else meth.parent.parent.parent
            name = meth.child_by_field_name("name").text.decode()
            where = methods[meth.start_byte] = (_qualname(cls), name, _last_super(meth, name))
        cls_name, name, after = where
        attr = use.child_by_field_name("attribute").text.decode()
        if _binds(use):
            if use.start_byte > after:
                key = (cls_name, name, attr, "binds")
                found[key] = line(use)  # the last binding
            continue
        found.setdefault((cls_name, name, attr, "reads"), line(use))
    return [
        {"class": c, "method": m, "attribute": a, "how": how, "line": ln}
        for (c, m, a, how), ln in sorted(found.items(), key=lambda kv: (kv[1], kv[0]))
    ]


def _qualname(cls: Node) -> str:
    from .ts import qualname

    return qualname(cls)
