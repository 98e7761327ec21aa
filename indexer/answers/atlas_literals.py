"""The model-output literals of a test file, for the behaviour atlas's cases (issue 44): every string a test
writes, read with `ast` and folded, never run.

Tests rarely write a raw output as one literal: they join constants (`SECTION_BEGIN + ... + SECTION_END`),
format them (`f"[{SIMPLE_CALL}]"`), call small helpers (`_wrap(_tool("functions.f:0", args))`, where `_tool`
only returns an f-string of its parameters), `"".join(...)` pieces and `json.dumps({...})` arguments. The
folder below computes such expressions from what the file itself binds, and gives up (None) on anything else:

- a string constant; an f-string whose parts fold (no conversion but `!s`, no format spec);
- `a + b` of two folded strings; a name bound, in the module, a class body or the enclosing function, to a
  folded value by a plain assignment (the last one before, in source order);
- `SEP.join(x)` of a list or tuple of folded strings (or a `*args` parameter);
- `json.dumps(LITERAL)` (a literal Python value, names bound to literal values read; `ensure_ascii`,
  `indent`, `separators` when literal too);
- a call of a module-level function of the file whose body is one `return EXPR` (a docstring before it
  allowed), its arguments folded and bound to its parameters (`*args` as a tuple), at most a few calls deep.

`literals(source)` gives each outermost expression that folds to a string, with its line, in file order;
`code_blocks(markdown)` the fenced code blocks and inline code of a documentation page. `stored(db, blob,
path)` either, as the database keeps them (table atlas_literals: read once per blob, by FORMAT).
"""

from __future__ import annotations

import ast
import functools
import json
import re

FORMAT = 2  # bump when what is read changes: the stored literals are read again
MAX_DEPTH = 4  # helper calls inside helper calls
MIN_LENGTH = 8  # shorter strings are not model outputs


class _Scope:
    def __init__(self, parent: _Scope | None = None):
        self.names: dict[str, object] = {}
        self.parent = parent

    def get(self, name: str):
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None


class _Folder:
    def __init__(self, tree: ast.Module):
        self.functions = {
            n.name: n
            for n in tree.body
            if isinstance(n, ast.FunctionDef) and _returns_only(n) is not None and not n.decorator_list
        }

    def fold(self, node, scope: _Scope, depth: int = 0):
        """The value of an expression (a str, or a tuple of them for *args), or None."""
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    parts.append(v.value)
                elif (
                    isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion in (-1, 115)
                ):
                    x = self.fold(v.value, scope, depth)
                    if not isinstance(x, str):
                        return None
                    parts.append(x)
                else:
                    return None
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self.fold(node.left, scope, depth), self.fold(node.right, scope, depth)
            return a + b if isinstance(a, str) and isinstance(b, str) else None
        if isinstance(node, ast.Name):
            v = scope.get(node.id)
            return v if isinstance(v, (str, tuple)) else None
        if isinstance(node, ast.Call):
            return self._call(node, scope, depth)
        return None

    def _items(self, node, scope: _Scope, depth: int):
        if isinstance(node, (ast.List, ast.Tuple)):
            out = []
            for e in node.elts:
                if isinstance(e, ast.Starred):
                    v = self.fold(e.value, scope, depth)
                    if not isinstance(v, tuple):
                        return None
                    out.extend(v)
                else:
                    v = self.fold(e, scope, depth)
                    if not isinstance(v, str):
                        return None
                    out.append(v)
            return out
        v = self.fold(node, scope, depth)
        return list(v) if isinstance(v, tuple) else None

    def _call(self, node: ast.Call, scope: _Scope, depth: int):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "join" and len(node.args) == 1 and not node.keywords:
            sep = self.fold(f.value, scope, depth)
            items = self._items(node.args[0], scope, depth)
            return sep.join(items) if isinstance(sep, str) and items is not None else None
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "dumps"
            and isinstance(f.value, ast.Name)
            and f.value.id == "json"
            and len(node.args) == 1
        ):
            value = _value(node.args[0], scope)
            try:
                kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            except (ValueError, SyntaxError, TypeError):
                return None
            if value is _NONE:
                return None
            if set(kwargs) - {"ensure_ascii", "indent", "separators"}:
                return None
            try:
                return json.dumps(value, **kwargs)
            except (TypeError, ValueError):
                return None
        if isinstance(f, ast.Name) and f.id in self.functions and depth < MAX_DEPTH and not node.keywords:
            fn = self.functions[f.id]
            a = fn.args
            if a.kwonlyargs or a.kwarg or a.posonlyargs or a.defaults:
                return None
            values = []
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    return None
                v = self.fold(arg, scope, depth)
                if v is None:
                    return None
                values.append(v)
            params = [p.arg for p in a.args]
            if len(values) < len(params) or (len(values) > len(params) and a.vararg is None):
                return None
            inner = _Scope(self.module)
            inner.names.update(zip(params, values, strict=False))
            if a.vararg is not None:
                inner.names[a.vararg.arg] = tuple(values[len(params) :])
            v = self.fold(_returns_only(fn), inner, depth + 1)
            return v if isinstance(v, str) else None
        return None


_NONE = object()


def _value(node, scope: _Scope):
    """A literal Python value (as ast.literal_eval reads it), names bound to literal values read from the scope;
    _NONE when it is not one."""
    if isinstance(node, ast.Name):
        v = scope.get(node.id)
        return _NONE if v is None else v
    if isinstance(node, ast.Dict):
        if None in node.keys:
            return _NONE
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            kk, vv = _value(k, scope), _value(v, scope)
            if kk is _NONE or vv is _NONE:
                return _NONE
            out[kk] = vv
        return out
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(e, scope) for e in node.elts]
        return _NONE if _NONE in items else items
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NONE


def _returns_only(fn: ast.FunctionDef):
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None


# words of a test's name (its function, the variable a literal is bound to, a pytest.param id) saying the
# literal is one the parser must not read as calls, or reads only in part
NEGATIVE = re.compile(
    r"(?i)(invalid|malformed|broken|incomplete|partial|truncat|unclos|untermin|corrupt|garbage|reject|fail|error"
    r"|wrong|mismatch|bad_|_bad|leak|unknown|not_a|no_tool|missing)"
)


@functools.lru_cache(maxsize=2048)
def literals(source: str) -> tuple[tuple[int, str, bool], ...]:
    """Each outermost expression of a Python file that folds to a string (see the module), (line, value,
    negative), in file order, each value once; `negative`: a name around it (its test function, the variable
    it is bound to, its pytest.param id) says the parser must not read it whole (NEGATIVE)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return ()
    folder = _Folder(tree)
    out: dict[str, tuple[int, bool]] = {}

    def visit(node, scope: _Scope, names: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = _Scope(scope)
            for d in getattr(node, "decorator_list", []):
                visit(d, scope, names)
            if not isinstance(node, ast.ClassDef):
                for d in node.args.defaults + node.args.kw_defaults:
                    if d is not None:
                        visit(d, scope, names)
            for stmt in node.body:
                visit(stmt, inner, f"{names} {node.name}")
            return
        if isinstance(node, ast.Call) and any(k.arg == "id" for k in node.keywords):  # pytest.param(..., id=)
            ids = [
                k.value.value for k in node.keywords if k.arg == "id" and isinstance(k.value, ast.Constant)
            ]
            names = f"{names} {' '.join(map(str, ids))}"
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = f"{names} {' '.join(t.id for t in targets if isinstance(t, ast.Name))}"
        if isinstance(node, ast.expr):
            v = folder.fold(node, scope)
            if isinstance(v, str):
                if len(v) >= MIN_LENGTH and v not in out:
                    out[v] = (node.lineno, bool(NEGATIVE.search(names)))
                return
        for child in ast.iter_child_nodes(node):
            visit(child, scope, names)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):  # bound after its value is visited
            value = folder.fold(node.value, scope) if node.value is not None else None
            if value is None and isinstance(
                node.value, (ast.Dict, ast.List)
            ):  # a literal: json.dumps reads it
                value = _value(node.value, scope)
                value = None if value is _NONE else value
            for t in targets:
                if isinstance(t, ast.Name):
                    if value is not None:
                        scope.names[t.id] = value
                    else:
                        scope.names.pop(t.id, None)

    module = _Scope()
    folder.module = module
    for stmt in tree.body:
        visit(stmt, module, "")
    return tuple(sorted((line, v, neg) for v, (line, neg) in out.items()))


_FENCE = re.compile(r"^(```+|~~~+)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)
_INLINE = re.compile(r"`([^`\n]{8,})`")


def code_blocks(markdown: str) -> tuple[tuple[int, str, bool], ...]:
    """The fenced code blocks (their text) and inline code spans of a Markdown page, (line, value, False)."""
    out = []
    for m in _FENCE.finditer(markdown):
        out.append((markdown.count("\n", 0, m.start()) + 2, m.group(2).rstrip("\n"), False))
    for m in _INLINE.finditer(_FENCE.sub("", markdown)):
        out.append((0, m.group(1), False))
    return tuple(dict.fromkeys(out))


def stored(db, blob: str, path: str, text) -> list[tuple[int, str, bool]]:
    """The literals of a test file (`path` a .py) or the code of a documentation page, as stored in the
    database: read once (`text()` gives the file's text) and kept in atlas_literals, when the connection
    writes (a reader without the table reads them every time)."""
    try:
        row = db.execute("select format from atlas_read where blob_id = ?", [blob]).fetchone()
    except Exception:  # noqa: BLE001 - an older database without the atlas's tables
        row = None
    if row is not None and row[0] == FORMAT:
        return [
            (r[0], r[1], bool(r[2]))
            for r in db.execute(
                "select line, value, negative from atlas_literals where blob_id = ? order by rowid", [blob]
            )
        ]
    source = text()
    if source is None:
        return []
    found = list(literals(source) if path.endswith(".py") else code_blocks(source))
    try:
        with db.conn:
            db.conn.execute("delete from atlas_literals where blob_id = ?", [blob])
            db.conn.executemany(
                "insert into atlas_literals(blob_id, line, value, negative) values (?, ?, ?, ?)",
                [(blob, n, v, int(neg)) for n, v, neg in found],
            )
            db.conn.execute(
                "insert or replace into atlas_read(blob_id, format) values (?, ?)", [blob, FORMAT]
            )
    except Exception:  # noqa: BLE001, S110 - a read-only connection: read again next time
        pass
    return found
