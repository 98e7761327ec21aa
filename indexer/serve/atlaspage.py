"""The browser's /-/atlas (issue 44): the behaviour atlas as stored, names x versions, each cell coloured by its
worst status over the cases and modes asked (?case=, ?mode=, ?prefix=); a cell links to its row
(?name=&version=): every case in every mode, where each case comes from, its raw output and expected calls,
and a button replaying that output (a same-origin POST to /-/replay). The page reads the store only: running
the atlas is `tpindex atlas`'s; nothing runs on a GET."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from datasette.utils.asgi import Response

RANK = {"not-applicable": 0, "ok": 1, "wrong": 2, "error": 3}  # a cell shows its worst (ok beats n/a)
LETTER = {"ok": "", "not-applicable": "·", "wrong": "w", "error": "e"}
MAX_FIELD = 100


@dataclass
class Cell:
    version: str
    status: str = ""  # the worst status of its cells ("" not run, or not registered)
    title: str = ""
    href: str = ""

    @property
    def letter(self) -> str:
        return LETTER.get(self.status, "")


@dataclass
class Row:
    name: str
    cells: list[Cell] = field(default_factory=list)


def _matrix(answer, prefix: str, href) -> tuple[list[str], list[Row], dict[str, int]]:
    versions = list(dict.fromkeys(r.version for r in answer.rows))
    by: dict[str, dict[str, object]] = {}
    for r in answer.rows:
        if r.name.startswith(prefix):
            by.setdefault(r.name, {})[r.version] = r
    counts = dict.fromkeys(RANK, 0)
    rows = []
    for name in sorted(by):
        row = Row(name)
        for v in versions:
            r = by[name].get(v)
            if r is None or not r.cells:
                row.cells.append(Cell(v))
                continue
            worst = max(r.cells, key=lambda c: RANK.get(c.status, 0))
            bad = [c for c in r.cells if c.status in ("wrong", "error")]
            counts[worst.status] = counts.get(worst.status, 0) + 1
            title = f"{name} @ {v}: " + (
                f"{len(bad)} cell(s) wrong or an error, e.g. {bad[0].case} {bad[0].mode}: {bad[0].detail}"
                if bad
                else ("every cell ok" if worst.status == "ok" else "ok, or not applicable")
            )
            row.cells.append(Cell(v, worst.status, title[:300], href(name, v)))
        rows.append(row)
    return versions, rows, counts


async def atlas_page(datasette, request):
    from ..core.problems import Problem
    from .cells import Urls
    from .matrix import short
    from .state import ask, served_database

    wanted, names = await served_database(datasette, request)
    CASE_IDS, MODES = await ask(datasette, wanted, lambda ix: ix.atlas_axes())  # noqa: N806
    args = request.args
    case = args.get("case", "") if args.get("case", "") in CASE_IDS else ""
    mode = args.get("mode", "") if args.get("mode", "") in MODES else ""
    prefix = (args.get("prefix", "") or "").strip()[:MAX_FIELD]
    name = (args.get("name", "") or "").strip()[:MAX_FIELD]
    version = (args.get("version", "") or "").strip()[:MAX_FIELD]
    several = len(names) > 1

    def href(n: str, v: str) -> str:
        q = {"name": n, "version": v, **({"db": wanted} if several else {})}
        return datasette.urls.path("-/atlas") + "?" + urlencode(q)

    context = {
        "database": wanted,
        "databases": names,
        "cases": CASE_IDS,
        "modes": MODES,
        "case": case,
        "mode": mode,
        "prefix": prefix,
        "short": short,
        "urls_parser": Urls(datasette, wanted, several).parser,
        "error": None,
        "row": None,
        "matrix": None,
    }
    try:
        if name and version:
            answer = await ask(datasette, wanted, lambda ix: ix.atlas([name], tags=version))
            context["row"] = answer.rows[0] if answer.rows else None
            context["name"], context["version"] = name, version
            context["not_run"] = not answer.rows
        else:
            answer = await ask(
                datasette, wanted, lambda ix: ix.atlas(case=case or None, mode=mode or None, sources=False)
            )
            versions, rows, counts = _matrix(answer, prefix, href)
            context["matrix"] = {"versions": versions, "rows": rows, "counts": counts}
            context["not_run"] = len(answer.not_run)
    except Problem as e:
        from .errors import inline

        context["error"] = inline(e)
    return Response.html(await datasette.render_template("tpindex_atlas.html", context, request=request))
