"""The tests' shared fixtures and helpers are a conftest plugin package (tests/fixtures/, issue 24): no test
module imports another test module or conftest.py, and every module of the package is a plugin."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement of the file names (those inside functions too), with its line."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def test_no_test_module_imports_another_test_module_or_conftest():
    test_modules = {p.stem for p in TESTS.rglob("test_*.py")}
    bad = [
        f"{path.relative_to(TESTS)}:{line} imports {module}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, module in imported_modules(path)
        if module.split(".")[0] in test_modules | {"conftest"}
    ]
    assert not bad, "shared helpers and fixtures belong in tests/fixtures/:\n" + "\n".join(bad)


def test_every_module_of_the_fixture_package_is_a_plugin():
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    listed = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in n.targets)
    )
    modules = {f"fixtures.{p.stem}" for p in FIXTURES.glob("*.py") if p.stem != "__init__"}
    assert set(listed) == modules
    assert not [p for p in FIXTURES.glob("test_*.py")], (
        "a test module in the fixture package would be collected"
    )
