"""Environment defaults: the names a module such as `vllm/envs.py` gives, each with the value it has in
vLLM's default configuration (every environment variable unset), read without running the module.

- `environment`: an entry of a module-level dict whose value is a lambda reading the environment,
  `"VLLM_X": lambda: os.getenv("VLLM_X", "True").lower() in ("true", "1")` (what `envs.VLLM_X` runs
  through the module's `__getattr__`): value = the lambda's result with the variable unset
  (extract/expr.py env_value), None when it cannot be read that way; `variable` = the variable it reads.
- `declared`: `VLLM_X: bool = True` under `if TYPE_CHECKING:` (the declared default, for type checkers).

Values are Python literals as `repr` writes them (`True`, `'auto'`, `16`). Where both forms name a
variable, the resolver takes the environment one when it was read, else the declared one.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from . import expr
from .ts import line, text

# A lambda's value read before, by its text: vllm/envs.py's versions repeat most of their ~170 entries. In a
# tree without errors an expression's text decides its subtree, so the value read from it is the same.
_READ: dict[str, tuple[str | None, str | None, str]] = {}
READ_CACHE = 8192
_TYPE_CHECKING = re.compile(r"(^|[.])TYPE_CHECKING$")
_READS_ENV = re.compile(r"(getenv|environ)")


def extract(root: Node) -> list[dict]:
    """Read from the module's top-level statements (no pattern walk: both forms are at module level, so the
    few hundred statements of vllm/envs.py are visited, not its whole tree)."""
    rows = []
    clean = not root.has_error
    for stmt in root.named_children:
        if stmt.type == "if_statement":
            _declared(stmt, rows)
        elif stmt.type == "expression_statement":
            for a in stmt.named_children:
                if a.type == "assignment":
                    for d in a.named_children:
                        if d.type == "dictionary":
                            _entries(d, rows, clean)
    rows.sort(key=lambda r: r["line"])
    return rows


def _declared(stmt: Node, rows: list[dict]) -> None:
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) at module level: its annotated assignments with a value."""
    cond, body = stmt.child_by_field_name("condition"), stmt.child_by_field_name("consequence")
    if cond is None or body is None or body.type != "block" or cond.type not in ("identifier", "attribute"):
        return
    if not _TYPE_CHECKING.search(text(cond)):
        return
    for es in body.named_children:
        if es.type != "expression_statement":
            continue
        for node in es.named_children:
            if node.type != "assignment":
                continue
            name, value = node.child_by_field_name("left"), node.child_by_field_name("right")
            if (
                name is None
                or name.type != "identifier"
                or value is None
                or node.child_by_field_name("type") is None
            ):
                continue
            got = expr.literal(value)
            rows.append(
                {
                    "name": text(name),
                    "how": "declared",
                    "value": None if got is expr.UNKNOWN else repr(got),
                    "variable": None,
                    "written": expr.short(text(value)),
                    "line": line(node),
                }
            )


def _entries(d: Node, rows: list[dict], clean: bool) -> None:
    """The entries of a module-level dict whose value is a lambda reading the environment."""
    for pair in d.named_children:
        if pair.type != "pair":
            continue
        key, lam = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        if key is None or key.type != "string" or lam is None or lam.type != "lambda":
            continue
        value = lam.child_by_field_name("body")
        if value is None:
            continue
        written = text(value)
        if not _READS_ENV.search(written):
            continue
        name = expr.literal(key)
        if not isinstance(name, str):
            continue
        known = _READ.get(written) if clean else None
        if known is None:
            variables: list[str] = []
            got = expr.env_value(value, variables)
            known = (
                None if got is expr.UNKNOWN else repr(got),
                variables[0] if variables else None,
                expr.short(written),
            )
            if clean:
                if len(_READ) >= READ_CACHE:
                    _READ.clear()
                _READ[written] = known
        rows.append(
            {
                "name": name,
                "how": "environment",
                "value": known[0],
                "variable": known[1],
                "written": known[2],
                "line": line(pair),
            }
        )
