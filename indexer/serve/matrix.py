"""The parser matrix: registered names as rows, indexed versions as columns, each cell coloured by how
the name is implemented at that version. Served at /-/parser-matrix. A cell links to the name's chain
(the which question), or, where the real file moved or its code changed since the previous version
that has the name, to the diff of that code."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

IMPLS = ("standalone", "unified", "name-check", "dispatch", "unresolved")
LETTERS = {"standalone": "s", "unified": "u", "name-check": "n", "dispatch": "d", "unresolved": "?"}
KINDS = ("tool", "reasoning", "engine")
IMPL_HELP = {
    "standalone": "its own class in its registered file",
    "unified": "a stub over an adapter made from a parser class in vllm/parser/",
    "name-check": "the manager compares the name and picks the class",
    "dispatch": "hard-coded: CLI choices and a branch in the serving code",
    "unresolved": "the chain could not be followed",
}


@dataclass
class Cell:
    version: str
    impl: str | None = None
    title: str = ""
    href: str = ""
    moved: bool = False  # the real file differs from the one of the previous version that has the name
    changed: bool = False  # the same real file as that version, but the name's own code changed

    @property
    def letter(self) -> str:
        return LETTERS.get(self.impl or "", "")


@dataclass
class Row:
    kind: str
    name: str
    cells: list[Cell] = field(default_factory=list)


@dataclass
class Matrix:
    versions: list[str]
    sections: list[tuple[str, list[Row]]]  # (kind, rows)
    counts: dict[str, int]  # impl -> cells

    @property
    def n_rows(self) -> int:
        return sum(len(rows) for _, rows in self.sections)

    def window(self, keep: list[str]) -> Matrix:
        """Only the versions of `keep` (a range of them), and only the names registered in one of those. A cell
        keeps what it was told against the previous version that has the name, shown or not."""
        wanted = set(keep)
        counts = dict.fromkeys(IMPLS, 0)
        sections = []
        for kind, rows in self.sections:
            out = []
            for row in rows:
                cells = [c for c in row.cells if c.version in wanted]
                if any(c.impl for c in cells):
                    out.append(Row(row.kind, row.name, cells))
                    for c in cells:
                        if c.impl:
                            counts[c.impl] = counts.get(c.impl, 0) + 1
            if out:
                sections.append((kind, out))
        return Matrix([v for v in self.versions if v in wanted], sections, counts)


def short(label: str) -> str:
    return label[1:] if label[:1] == "v" and label[1:2].isdigit() else label


def describe(name: str, version: str, r: dict) -> str:
    if r["impl"] == "unresolved":
        return f"{name} @ {version}: unresolved ({r['reason'] or '?'})"
    where = f"{r['real_file']}:{r['real_line']}" if r["real_line"] else (r["real_file"] or "?")
    via = f" via {r['adapter']}" if r["adapter"] else ""
    return f"{name} @ {version}: {r['impl']}, {where} ({r['real_class']}){via}"


def build(versions: list[str], rows: list[dict], which_url, diff_url=None) -> Matrix:
    """versions in version order; rows from Index.matrix_rows; which_url(name, version) -> a cell's link;
    diff_url(name, kind, a, b, path_a, path_b) -> the link of a cell whose real file moved or changed."""
    position = {v: i for i, v in enumerate(versions)}
    by_key: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        if r["version"] in position:
            by_key.setdefault((r["kind"], r["name"]), {})[r["version"]] = r
    counts = dict.fromkeys(IMPLS, 0)
    sections = []
    for kind in KINDS + tuple(sorted({k for k, _ in by_key} - set(KINDS))):
        out = []
        for (k, name), present in sorted(by_key.items(), key=lambda kv: kv[0][1]):
            if k != kind:
                continue
            row, previous = Row(kind, name), None
            for v in versions:
                r = present.get(v)
                if r is None:
                    row.cells.append(Cell(v))
                    continue
                counts[r["impl"]] = counts.get(r["impl"], 0) + 1
                moved = previous is not None and (previous["real_file"] or "") != (r["real_file"] or "")
                changed = previous is not None and not moved and previous.get("code_sig") != r.get("code_sig")
                title = describe(name, v, r)
                href = which_url(name, v)
                if (moved or changed) and diff_url is not None and (previous["real_file"] or r["real_file"]):
                    what = "real file moved" if moved else "code changed"
                    title += f" ({what} since {previous['version']}: click for the diff)"
                    # the real file's diff when it moved or changed, else the name's own code, file by file
                    real = moved or previous.get("real_blob") != r.get("real_blob")
                    href = diff_url(
                        name,
                        kind,
                        previous["version"],
                        v,
                        previous["real_file"] if real else None,
                        r["real_file"] if real else None,
                    )
                elif moved or changed:
                    title += " (real file moved)" if moved else f" (code changed since {previous['version']})"
                row.cells.append(Cell(v, r["impl"], title, href, moved, changed))
                previous = r
            out.append(row)
        if out:
            sections.append((kind, out))
    return Matrix(versions, sections, counts)


async def load(
    datasette,
    database: str,
    kind: str,
    prefix: str,
    which_url,
    diff_url=None,
    first: str = "",
    last: str = "",
) -> tuple[Matrix, list[str]]:
    """The matrix of the versions `first` .. `last` (each read by the one resolver; blank: open), and every
    indexed version (the range's choices)."""
    from .state import ask

    versions, rows, shown = await ask(
        datasette,
        database,
        lambda ix: (ix.labels(), ix.matrix_rows(kind, prefix), ix.version_range(first or None, last or None)),
        time_limit=True,
    )  # under serve's --time-limit: QueryInterrupted past it
    m = build(versions, rows, which_url, diff_url)
    return (m if len(shown) == len(versions) else m.window(shown)), versions


def which_link(base: str):
    """base: the URL of the `which` canned query."""
    return lambda name, version: f"{base}?{urlencode({'name': name, 'version': version})}"
