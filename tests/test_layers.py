"""The package is laid out as the data flows (issue 24): every import of every module under indexer/ (those
inside functions too, read with ast, not by importing) runs from a layer to a lower one, never up, never
sideways between two packages of one layer, never round; and the three frameworks are imported only by the
layer that presents through them (click: cli/, Datasette: serve/, the MCP SDK:
mcp/ and serve/ where the plugin mounts the tools).

`graph()` is also what the closing note of issue 24 counts: `python tests/test_layers.py` prints it."""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "indexer"

# lowest first; packages on one line share a layer and must not import each other
LAYERS: list[tuple[str, ...]] = [
    ("core",),
    ("sources", "extract"),
    ("store",),
    ("resolve",),
    ("build", "answers"),
    ("replay",),  # answers-level: reads the index and the sources, runs children; never build/
    ("api", "schemas"),
    ("render",),
    ("mcp",),
    ("serve",),  # the plugin mounts the MCP tools
    ("cli",),
]
LAYER = {pkg: i for i, pkgs in enumerate(LAYERS) for pkg in pkgs}

# the frameworks, and the only packages that may import each
FRAMEWORKS = {
    "click": {"cli"},
    "datasette": {"serve"},
    "datasette_mcp": {"serve"},
    "mcp": {"mcp", "serve"},
}

# run by another interpreter, importing nothing of tpindex: data files, not modules of the package
CHILD = PACKAGE / "replay" / "child"


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(CHILD):
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, mods: dict[str, Path]):
    """(target module or top-level package, line, inside a function) for every import in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    for node in ast.walk(tree):
        inside = id(node) in in_function
        if isinstance(node, ast.Import):
            for a in node.names:
                yield _known(a.name, mods), node.lineno, inside
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                full = f"{base}.{a.name}"
                yield _known(full if full in mods else base, mods), node.lineno, inside


def _known(target: str, mods: dict[str, Path]) -> str:
    if target.split(".")[0] != "indexer":
        return target.split(".")[0]
    while target not in mods and "." in target:
        target = target.rpartition(".")[0]
    return target


def layer_of(module: str) -> str | None:
    """The package of the layers a module of indexer/ belongs to (api.py: "api"); None for indexer itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def graph():
    mods = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    found = []
    for name, path in mods.items():
        for target, line, inside in imports(name, path, mods):
            found.append((name, target, line, inside))
            if target.startswith("indexer") and target != name:
                edges[name].add(target)
    return mods, edges, found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def violations():
    mods, edges, found = graph()
    bad = []
    for name, target, line, _ in found:
        src = layer_of(name)
        where = f"{mods[name].relative_to(PACKAGE.parent)}:{line}"
        if not target.startswith("indexer"):
            allowed = FRAMEWORKS.get(target)
            if allowed is not None and src not in allowed:
                bad.append(f"{where}: imports {target}, which only {', '.join(sorted(allowed))}/ may import")
            continue
        dst = layer_of(target)
        if src is None or dst is None or src == dst:
            continue
        if src not in LAYER or dst not in LAYER:
            bad.append(f"{where}: {name} -> {target}: a package not in the layers")
        elif LAYER[dst] > LAYER[src]:
            bad.append(f"{where}: {name} imports {target}, a higher layer ({dst} above {src})")
        elif LAYER[dst] == LAYER[src]:
            bad.append(f"{where}: {name} imports {target}, a package of its own layer ({src} and {dst})")
    return bad


def test_every_module_belongs_to_a_layer():
    mods = modules()
    assert {layer_of(m) for m in mods} - {None} <= set(LAYER), sorted(
        {layer_of(m) for m in mods} - set(LAYER)
    )
    top = {
        p.stem if p.suffix else p.name
        for p in PACKAGE.iterdir()
        if p.name not in ("__init__.py", "__pycache__") and (p.suffix == ".py" or p.is_dir())
    }
    assert top <= set(LAYER), f"not in any layer: {sorted(top - set(LAYER))}"


def test_no_import_runs_up_or_sideways():
    bad = violations()
    assert not bad, "\n".join(bad)


def test_no_cycle():
    _, edges, _ = graph()
    found = cycles(edges)
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def test_the_replay_children_import_nothing_of_tpindex():
    for path in CHILD.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("indexer")):
                raise AssertionError(f"{path}:{node.lineno} imports tpindex")
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("indexer") for a in node.names), f"{path}:{node.lineno}"


def test_the_walk_sees_imports_inside_functions(tmp_path, monkeypatch):
    """The test itself: an upward import hidden in a function body is found."""
    pkg = tmp_path / "indexer"
    (pkg / "core").mkdir(parents=True)
    (pkg / "cli").mkdir()
    for p in (pkg, pkg / "core", pkg / "cli"):
        (p / "__init__.py").write_text("")
    (pkg / "cli" / "main.py").write_text("import click\n")
    (pkg / "core" / "x.py").write_text("def f():\n    from ..cli import main\n    import click\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    monkeypatch.setattr(sys.modules[__name__], "CHILD", pkg / "replay" / "child")
    bad = violations()
    assert len(bad) == 2 and "a higher layer (cli above core)" in bad[0] and "imports click" in bad[1], bad


def summary() -> str:
    mods, edges, found = graph()
    inside = sum(1 for n, t, _, i in found if i and t.startswith("indexer"))
    used = {layer_of(m) for m in mods} - {None}
    return (
        f"modules {len(mods)}, layers {len({LAYER[p] for p in used if p in LAYER})}, "
        f"violations {len(violations())}, cycles {len(cycles(edges))}, "
        f"imports of tpindex inside functions {inside}"
    )


if __name__ == "__main__":
    print(summary())
    print("\n".join(violations()))
    for c in cycles(graph()[1]):
        print("cycle:", " <-> ".join(c))


def test_the_readme_layout_names_every_package_and_module():
    """The README's layout section lists every package, and every module of the layered packages."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    missing = []
    for p in sorted(PACKAGE.iterdir()):
        if p.name.startswith("_"):
            continue
        if p.is_dir() and (p / "__init__.py").exists():
            if f"indexer/{p.name}/" not in section:
                missing.append(f"indexer/{p.name}/")
            if p.name in ("core", "store", "resolve", "build", "render", "cli", "serve", "mcp"):
                missing += [
                    f"indexer/{p.name}/{m.name}"
                    for m in sorted(p.glob("*.py"))
                    if not m.name.startswith("_") and m.name not in section
                ]
        elif p.suffix == ".py" and f"indexer/{p.name}" not in section:
            missing.append(f"indexer/{p.name}")
    assert not missing, f"the README's layout section does not name {missing}"


# -- one road (issue 24): the command line, the web pages and the MCP tools ask Index and nothing else ------------

SURFACES = ("cli", "serve", "mcp")
ROAD = {"api", "schemas", "render", "core", *SURFACES}  # what a surface module may import of tpindex

# (surface module, module of another package it imports): why it is not a question to the index. The test fails
# when one is no longer imported, so the list only shrinks.
OFF_ROAD = {
    (
        "indexer.cli.main",
        "indexer.build.pipeline",
    ): "build writes the index: the write road (sources -> build -> store)",
    ("indexer.cli.main", "indexer.build.choose"): "build picks the versions it writes (the write road)",
    ("indexer.cli.main", "indexer.sources.directory"): "build --path: where the versions it writes come from",
    ("indexer.cli.main", "indexer.sources.pypi"): "build --from-pypi: where the versions it writes come from",
    ("indexer.cli.main", "indexer.sources.git"): "build --repo: where the versions it writes come from",
    (
        "indexer.cli.main",
        "indexer.store.database",
    ): "build checks and opens the file it writes; is_damaged tells a "
    "damaged file apart in every command's one error path",
    ("indexer.cli.commands", "indexer.store.database"): "SQLITE_MAGIC: -o never writes over an SQLite file",
}

# surface modules that still hold SQL, and why (Datasette's own plumbing, not the answers' data)
SQL_LEFT = {
    "indexer.serve.app": "Datasette's table counts, each under a time limit (the served database's class)",
    "indexer.serve.plugin": "prepare_connection: whether a connection Datasette opened is a tpindex database",
}


def off_road() -> dict[tuple[str, str], int]:
    _, _, found = graph()
    return {
        (n, t): line
        for n, t, line, _ in found
        if layer_of(n) in SURFACES and t.startswith("indexer") and layer_of(t) not in ROAD
    }


def test_the_surfaces_ask_index_for_data():
    """No module of cli/, serve/ or mcp/ imports answers/, store/, resolve/, build/, replay/ ... (inside functions
    too): data comes through api.Index, the text through render/."""
    mods = modules()
    found = off_road()
    bad = [
        f"{mods[n].relative_to(PACKAGE.parent)}:{line}: {n} imports {t}: ask Index (api.py) instead"
        for (n, t), line in sorted(found.items())
        if (n, t) not in OFF_ROAD
    ]
    assert not bad, "\n".join(bad)
    gone = sorted(set(OFF_ROAD) - set(found))
    assert not gone, f"no longer imported, drop from OFF_ROAD: {gone}"


SQL = re.compile(
    r"\b(select|insert|update|delete|pragma|create)\b.*\b(from|into|set|table|query_only|view|index)\b",
    re.I | re.S,
)


def sql_strings(path: Path) -> list[int]:
    """The lines of string constants in a module that read as SQL statements."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
    }
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in doc
        and SQL.search(n.value)
        and n.value.lstrip()
        .lower()
        .startswith(("select", "insert", "update", "delete", "pragma", "create", "with"))
    ]


def test_the_surfaces_run_no_sql_of_their_own():
    """The data SQL is the answers' (one file per fact under queries/read/, or their modules); what remains in
    cli/, serve/ and mcp/ is Datasette's plumbing, each module named in SQL_LEFT with why."""
    mods = modules()
    holding = {n: sql_strings(p) for n, p in mods.items() if layer_of(n) in SURFACES}
    holding = {n: lines for n, lines in holding.items() if lines}
    bad = [
        f"{mods[n].relative_to(PACKAGE.parent)}:{lines}: SQL in a surface module: a query file and an Index "
        "method instead"
        for n, lines in sorted(holding.items())
        if n not in SQL_LEFT
    ]
    assert not bad, "\n".join(bad)
    assert not sorted(set(SQL_LEFT) - set(holding)), "no SQL left there: drop it from SQL_LEFT"


def test_the_road_tests_see_what_they_guard(tmp_path, monkeypatch):
    """The tests themselves: a page importing answers/ and a command with its own SELECT are found."""
    pkg = tmp_path / "indexer"
    for d in ("answers", "serve", "cli"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "answers" / "which.py").write_text("X = 1\n")
    (pkg / "serve" / "page.py").write_text("def f():\n    from ..answers import which\n")
    (pkg / "cli" / "cmd.py").write_text('def g(db):\n    return db.execute("select label from versions")\n')
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    monkeypatch.setattr(sys.modules[__name__], "CHILD", pkg / "replay" / "child")
    assert set(off_road()) == {("indexer.serve.page", "indexer.answers.which")}
    assert sql_strings(pkg / "cli" / "cmd.py") == [2] and sql_strings(pkg / "serve" / "page.py") == []
