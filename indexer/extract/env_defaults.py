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

from tree_sitter import Node

from . import expr
from .ts import line, matches, query, text

# A lambda's value read before, by its text: vllm/envs.py's versions repeat most of their ~170 entries. In a
# tree without errors an expression's text decides its subtree, so the value read from it is the same.
_READ: dict[str, tuple[str | None, str | None, str]] = {}
READ_CACHE = 8192
# For each pattern of env_defaults.scm, the words one of which a blob holds where it matches (its predicates)
WORDS = ((b"TYPE_CHECKING",), (b"getenv", b"environ"))


def extract(root: Node) -> list[dict]:
    rows = []
    clean = not root.has_error
    for caps in matches(query("env_defaults.scm"), root):
        value = caps["value"][0]
        if "declared" in caps:
            node = caps["declared"][0]  # assignment < expression_statement < block < if_statement < module
            if _up(node, 4) != root:
                continue  # only a module-level `if TYPE_CHECKING:`
            got = expr.literal(value)
            rows.append(
                {
                    "name": text(caps["name"][0]),
                    "how": "declared",
                    "value": None if got is expr.UNKNOWN else repr(got),
                    "variable": None,
                    "written": expr.short(text(value)),
                    "line": line(node),
                }
            )
            continue
        node = caps["entry"][0]
        name = expr.literal(caps["name"][0])
        if not isinstance(name, str) or not _module_dict(node, root):
            continue
        written = text(value)
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
                "line": line(node),
            }
        )
    rows.sort(key=lambda r: r["line"])
    return rows


def _up(node: Node, n: int) -> Node | None:
    for _ in range(n):
        node = node.parent if node is not None else None
    return node


def _module_dict(pair: Node, root: Node) -> bool:
    """Whether a dict entry belongs to a dict assigned at module level."""
    d = pair.parent
    a = d.parent if d is not None and d.type == "dictionary" else None
    s = a.parent if a is not None and a.type == "assignment" else None
    return s is not None and s.type == "expression_statement" and s.parent == root
