"""Running the behaviour atlas (issue 44): every parser name at every version asked, on the cases of its own
files (indexer/answers/atlas_cases.py), through replay's child process, stored by what determines each cell.

    plan    per version: the names registered (parser_map), their cases, and each case's two run keys:
            `core`    (nonstream, stream:token, stream:char) = the case + the name's code closure (the blobs of
                      every file holding its code, parser_code: its own files and the framework files it runs)
                      and that of the reasoning parser of its name + their sentinels (the synthetic tokenizer's
                      special tokens are those of them the case's output holds: child/atlas_batch.py) + the
                      replay child's code;
            `serving` (serving-full, serving-stream) = core + the serving code (the blobs of the chat-completion
                      serving and protocol modules and of the parser manager, from the version's tree).
            A key whose cells are stored is not run again: an unchanged parser at the next release reads the
            cells an earlier release ran, and adding a release runs only what changed.
    run     one job per version and group of names (at most CHUNK): a worker imports the tree's protocol and
            serving code once and replays every case of its names (child/atlas_batch.py), each case under a
            CPU-time limit of its own; a worker killed (wall clock, memory) loses only the name it was on, which
            is run again alone.
    verdict answers/atlas_verdict.py; cells stored (atlas_cells), and which cells each (version, name, case)
            reads (atlas_map). A run killed midway keeps what it stored.

The answer is read back from the store (answers/atlas.py), with what this run did (`run`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from ..answers.atlas_cases import Facts, examples_of, name_cases, template_of, think_tokens
from ..answers.atlas_verdict import CORE_MODES, MODES, SERVING_MODES, normalized, verdict
from .trees import ReplayError, cache_root, materialize

RUN_FORMAT = 1  # bump when how cells are run or judged changes
CHUNK = 12  # names per job
JOB_SECONDS = 40.0  # wall-clock seconds a job may take per name in it (a loaded machine is slow)
SERVING_FILES = (
    "vllm/entrypoints/openai/serving_chat.py",
    "vllm/entrypoints/openai/chat_completion/serving.py",
    "vllm/entrypoints/openai/chat_completion/stream_processor.py",
    "vllm/entrypoints/openai/protocol.py",
    "vllm/entrypoints/openai/chat_completion/protocol.py",
    "vllm/entrypoints/openai/engine/protocol.py",
    "vllm/entrypoints/openai/serving_engine.py",
    "vllm/parser/parser_manager.py",
)
_CHILD = Path(__file__).resolve().parent / "child"
_CHILD_FILES = ("atlas_batch.py", "drive.py", "standins.py", "tokenizer.py", "speed.py", "main.py")


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def child_digest() -> str:
    """The replay child's code (and the template renderer it loads): a change reruns every cell."""
    h = hashlib.sha256()
    for f in (*(_CHILD / n for n in _CHILD_FILES), _CHILD.parent.parent / "extract" / "templates.py"):
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _closures(db, version: str, kind: str) -> dict[str, str]:
    """name -> the digest of (path, blob) of every file holding its code at the version."""
    files: dict[str, list] = {}
    for name, path, blob in db.execute(
        "select name, file, blob_id from parser_code_v where version = ? and kind = ? order by name, file",
        [version, kind],
    ):
        files.setdefault(name, []).append((path, blob))
    return {n: _digest(f) for n, f in files.items()}


def _serving(tree: Path) -> str:
    try:
        manifest = json.loads((tree / ".manifest.json").read_text())
    except (OSError, ValueError):
        return "unknown"
    return _digest([(f, manifest.get(f)) for f in SERVING_FILES])


class Plan:
    """The cells a run needs: per version, its map rows and the jobs' items."""

    def __init__(self):
        self.map_rows: list[
            tuple
        ] = []  # (version, kind, name, case, case_key, core, serving, status, detail)
        self.cases: dict[str, object] = {}  # case key -> Case
        self.items: dict[str, tuple[str, list[dict]]] = {}  # version -> (its tree, the items to run)
        self.reused = 0
        self.pairs: set[str] = set()


def plan(db, versions: list[str], names: list[str] | None, kind: str, rows: dict, notice=None) -> Plan:
    from .run import _registered, specials_of

    out = Plan()
    child = child_digest()
    stored = _stored(db)
    # the examples of each name at each version (its test files' literals read as calls), for the writer of
    # a version where the name has none (its nearest version's, when they hold only its tokens there)
    examples: dict[str, dict[int, list]] = {}
    related: dict[
        tuple[int, str], list[str]
    ] = {}  # (version, name) -> its aliases (the same registered class)
    tokens_at: dict[tuple[int, str], frozenset] = {}
    for i, v in enumerate(versions):
        facts = Facts(db, v)
        classes: dict[tuple, list[str]] = {}
        named = db.execute(  # aliases: names registered to one class (a subclass may write another format)
            "select name, code_sig, reg_module, reg_class from parser_map_v where version = ? and kind = ?"
            " order by name",
            [v, kind],
        ).fetchall()
        for name, _, reg_module, reg_class in named:
            if reg_class:
                classes.setdefault((reg_module, reg_class), []).append(name)
        wanted = names is None or set(names)
        for name, sig, reg_module, reg_class in named:
            same = [n for n in classes.get((reg_module, reg_class), []) if n != name] if reg_class else []
            if wanted is True or name in wanted or set(same) & wanted:
                tokens = specials_of(db, name, v, kind, sig or f"version {v}")[0]
                tokens_at[(i, name)] = frozenset(tokens)
                found = examples_of(facts, kind, name, tokens)
                if found:
                    examples.setdefault(name, {})[i] = found
            related[(i, name)] = same
    for i, v in enumerate(versions):
        registered = [
            (r[0], r[1])
            for r in db.execute(
                "select name, code_sig from parser_map_v where version = ? and kind = ? order by name",
                [v, kind],
            )
            if names is None or r[0] in names
        ]
        if not registered:
            continue
        tree = materialize(rows[v], cache_root(), notice)
        serving = _serving(tree)
        facts = Facts(db, v)
        closures = _closures(db, v, kind)
        reasoning = _closures(db, v, "reasoning")
        items = []
        for name, sig in registered:
            specials, written = specials_of(db, name, v, kind, sig or f"version {v}")
            pair = name if kind == "tool" and name in reasoning else None
            think, r_specials, r_written, extras = None, [], [], set()
            if pair:
                from ..answers.card import name_sentinels

                think = think_tokens(name_sentinels(db, pair, v, "reasoning"))
                r_sig = _registered(db, v, "reasoning", pair)
                r_specials, r_written = specials_of(db, pair, v, "reasoning", r_sig)
            own = examples.get(name, {})
            mine = own.get(i, [])
            template = None
            for other in related.get((i, name), ()):  # an alias: its template, its examples
                template = template or template_of(facts, kind, other)
                mine = mine or examples.get(other, {}).get(i, [])
            # else its examples at the nearest version where its tokens are the same (its format, most likely)
            same_tokens = [j for j in own if j != i and tokens_at.get((j, name)) == tokens_at.get((i, name))]
            near = min(same_tokens, key=lambda j: (abs(j - i), -j)) if same_tokens else None
            borrowed = [(f"at {versions[near]}", own[near])] if near is not None else []
            cases = name_cases(
                facts, kind, name, specials, think, pair, examples=mine, borrowed=borrowed, template=template
            )
            todo = []
            for c in cases:
                if c.source == "none":
                    out.map_rows.append((v, kind, name, c.case, c.key, None, None, "not-applicable", c.why))
                    continue
                closure = [closures.get(name), reasoning.get(pair) if pair else None]
                extra = _concrete(specials, c)
                core = _digest(
                    RUN_FORMAT, child, c.key, closure, specials, written, extra, r_specials, r_written
                )
                serve = _digest(core, serving)
                out.map_rows.append((v, kind, name, c.case, c.key, core, serve, None, None))
                out.cases[c.key] = c
                modes = []
                if any((core, m) not in stored for m in CORE_MODES):
                    modes += ["nonstream", "stream"]
                    stored.update((core, m) for m in CORE_MODES)  # once, by the first version that needs it
                else:
                    out.reused += len(CORE_MODES)
                if any((serve, m) not in stored for m in SERVING_MODES):
                    modes.append("serving")
                    stored.update((serve, m) for m in SERVING_MODES)
                else:
                    out.reused += len(SERVING_MODES)
                if modes:
                    todo.append(
                        {**c.job(specials), "modes": modes, "core": core, "serving": serve, "key": c.key}
                    )
                    extras.update(extra)
            if todo:  # the tokenizer's special tokens: the child keeps those a case's output holds
                items.append(
                    {
                        "id": f"{v} {name}",
                        "name": name,
                        "specials": [t for t in specials if "{" not in t],
                        "extra_specials": sorted(extras),
                        "reasoning_specials": r_specials,
                        "unresolved_specials": list(dict.fromkeys(written + r_written)),
                        "cases": todo,
                    }
                )
        if items:
            out.items[v] = (str(tree), items)
    return out


def _concrete(tokens: list[str], case) -> list[str]:
    """The tokens written with run-time parts (`<tool_calls{self.suffix}>`) as the case's output writes them."""
    from ..answers.atlas_shapes import concrete

    texts = [t for t in (case.text, case.fallback.text if case.fallback else None) if t]
    patterns = [t for t in tokens if "{" in t]
    return sorted({x for text in texts for x in concrete(patterns, text)}) if patterns else []


def _stored(db) -> set[tuple[str, str]]:
    return {(k, m) for k, m in db.execute("select key, mode from atlas_cells where not transient")}


def run_atlas(
    db,
    names: list[str] | None = None,
    tags: str | None = None,
    kind: str = "tool",
    jobs: int | None = None,
    progress=None,
    notice=None,
    chunk: int = CHUNK,
):
    """Run what is not stored of the atlas of `names` (None: every name) at the versions of `tags` (None: every
    indexed version) into the writable database `db` (a store Reader); -> the Atlas answer read back, with
    what this run did. `progress(message)`: a line per job done; `notice(message)`: the slow first-use steps."""
    from ..answers.atlas import atlas, check_names
    from ..answers.atlas_model import AtlasRun
    from ..answers.grep import select_versions
    from . import env
    from .run import _rows

    t0, cpu0 = time.monotonic(), time.process_time()
    if kind != "tool":
        raise ReplayError(
            f"the atlas runs tool parsers (--kind tool); {kind} parsers are not run yet",
            "ask --kind tool, or read a reasoning parser's cases through its tool parser's `reasoning` case",
        )
    check_names(db, names, kind)
    versions = select_versions(db, tags, None)
    rows = _rows(db, versions)
    p = plan(db, versions, names, kind, rows, notice)
    work = [
        (v, tree, items[i : i + chunk])
        for v, (tree, items) in p.items.items()
        for i in range(0, len(items), chunk)
    ]
    done = {"cells": 0, "cpu": 0.0, "pairs": set()}

    def store(v: str, item: dict, cases: dict) -> None:
        done["cells"] += _store_item(db, p, v, item, cases)
        done["pairs"].add(f"{item['name']} {v}")

    if work:
        python = env.interpreter(cache_root(), notice or (lambda m: None))
        tmp = Path(tempfile.mkdtemp(prefix="tpindex-atlas-"))
        try:
            left = _run_jobs(python, work, tmp, jobs, progress, store, done)
            if left:  # each name its worker did not finish, alone (a spin or a crash is then its own)
                again = [(v, t, [it]) for v, t, it, _ in left]
                for v, _, it, res in _run_jobs(python, again, tmp, jobs, progress, store, done):
                    store(v, it, _failed(it, res))
        finally:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    _store_map(db, p)
    answer = atlas(db, names, tags=tags, kind=kind, _versions=versions)
    answer.run = AtlasRun(
        cells_run=done["cells"],
        cells_reused=p.reused,
        ran=sorted(done["pairs"], key=lambda s: (versions.index(s.split(" ")[1]), s)),
        jobs=len(work),
        seconds=round(time.monotonic() - t0, 2),
        cpu_seconds=round(done["cpu"] + time.process_time() - cpu0, 2),
        worker_cpu_seconds=round(done["cpu"], 2),
    )
    return answer


def _run_jobs(python, work, tmp: Path, parallel: int | None, progress, store, done: dict) -> list[tuple]:
    """Each (version, tree, items) as one worker's job; each item's cases stored (`store(version, item,
    cases)`) as soon as its job ends, read from what its worker appended as it went (so a run killed midway
    keeps the jobs it finished); -> (version, tree, item, the job's result) of the items a worker did not
    finish."""
    from . import runner

    job_list = []
    for k, (v, tree, items) in enumerate(work):
        job_list.append(
            {
                "id": f"atlas-{k}",
                "version": v,
                "tree": tree,
                "items": items,
                "partial": str(tmp / f"atlas-{k}.jsonl"),
            }
        )
    digest = hashlib.sha256(str(python).encode()).hexdigest()[:12]
    root = cache_root()
    n = max(len(it) for _, _, it in work)
    stored: set[tuple[int, str]] = set()

    def collect(k: int) -> None:
        v, _, items = work[k]
        by_id = {it["id"]: it for it in items}
        try:
            lines = Path(job_list[k]["partial"]).read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines:
            try:
                d = json.loads(line)
            except ValueError:
                continue  # a line its worker was writing when it was killed
            if d["id"] in by_id and (k, d["id"]) not in stored:
                stored.add((k, d["id"]))
                store(v, by_id[d["id"]], d["cases"])

    def tick(jid, count, total):
        k = int(jid.split("-")[1])
        collect(k)
        if progress:
            v, _, items = work[k]
            progress(f"{v}: {', '.join(it['name'] for it in items)[:60]} ({count}/{total} jobs)")

    results = runner.run(
        python,
        job_list,
        parallel=parallel or os.cpu_count() or 1,
        timeout=JOB_SECONDS * n + 30,
        preload_file=root / f"preload-{digest}.json",
        dataclass_file=root / f"dataclass-{digest}.json",
        root=root,
        progress=tick,
    )
    left = []
    for k, j in enumerate(job_list):
        collect(k)
        r = results.get(j["id"]) or {}
        done["cpu"] += r.get("cpu_seconds") or 0.0
        v, tree, items = work[k]
        left += [(v, tree, it, r) for it in items if (k, it["id"]) not in stored]
    return left


def _failed(item: dict, res: dict) -> dict:
    """The cases of a name whose worker ended without its result: an error each, run again next time."""
    err = res.get("error") or {"type": "Killed", "message": "the worker ended without a result"}
    result = {"status": res.get("status") or "crashed", "error": err, "modes": {}, "transient": True}
    return {c["case"]: {"text": c.get("text"), "na": None, "result": result} for c in item["cases"]}


def _store_item(db, p: Plan, version: str, item: dict, got: dict) -> int:
    """The cells of one name's cases at a version, judged and stored; -> how many."""
    conn = db.conn
    n = 0
    with conn:
        for c in item["cases"]:
            case = p.cases[c["key"]]
            res = got.get(c["case"])
            if res is None:
                continue
            if res.get("fallback") and case.fallback is not None:  # the template could not express it
                case = p.cases[c["key"]] = _replaced(case, res["fallback"])
            elif res.get("text") is not None and case.text is None:
                case.text = res["text"]
            _case_row(conn, case, replace=True)
            wanted = [
                m
                for m in MODES
                if (m in CORE_MODES and "nonstream" in c["modes"])
                or (m in SERVING_MODES and "serving" in c["modes"])
            ]
            if res.get("na"):
                cells = {m: ("not-applicable", res["na"], None, 0) for m in wanted}
            else:
                cells = _cells(version, res["result"], case.expected, c, conn)
            for m in wanted:
                status, detail, result, transient = cells.get(
                    m, ("error", "the mode gave no result", None, 0)
                )
                key = c["core"] if m in CORE_MODES else c["serving"]
                conn.execute(
                    "insert or replace into atlas_cells(key, mode, status, detail, result, transient)"
                    " values (?, ?, ?, ?, ?, ?)",
                    [
                        key,
                        m,
                        status,
                        detail,
                        json.dumps(result, ensure_ascii=False) if result else None,
                        transient,
                    ],
                )
                n += 1
    return n


def _replaced(case, why: str):
    """The case as its fallback (a test file's literal) gives it, stored under the template case's key."""
    import dataclasses

    fb = case.fallback
    return dataclasses.replace(
        case,
        source=fb.source,
        origin=fb.origin,
        text=fb.text,
        expected=fb.expected,
        tools=fb.tools,
        template=None,
        fallback=None,
        note=f"{why} ({case.origin})",
    )


def _case_row(conn, case, replace: bool = False) -> None:
    """The case's row: written once (`replace`: rewritten, as the run found it: a rendered text, a fallback)."""
    conn.execute(
        "insert into atlas_cases(key, case_id, source, origin, text, expected, tools, reasoning_parser, note)"
        " values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict(key) do update set "
        + (
            "source = excluded.source, origin = excluded.origin, text = excluded.text,"
            " expected = excluded.expected, tools = excluded.tools, note = excluded.note"
            if replace
            else "text = coalesce(text, excluded.text)"
        ),
        [
            case.key,
            case.case,
            case.source,
            case.origin,
            case.text,
            json.dumps(case.expected, ensure_ascii=False) if case.expected is not None else None,
            json.dumps(case.tools, ensure_ascii=False),
            case.reasoning_parser,
            case.note,
        ],
    )


def _cells(version: str, raw: dict, expected: dict | None, c: dict, conn) -> dict[str, tuple]:
    """mode -> (status, detail, normalized result, transient) of one case's replay."""
    from .run import _version

    v = _version(version, raw)
    transient = 1 if raw.get("transient") or raw.get("status") in ("killed", "crashed") else 0
    if v.status != "ok":
        why = v.error or v.status
        return {m: ("error", why, None, transient) for m in MODES}
    results = {m.mode: normalized(m) for m in v.modes}
    base = results.get("nonstream")
    if base is None:  # only serving ran: the non-streamed result is stored under the core key
        row = conn.execute(
            "select result from atlas_cells where key = ? and mode = 'nonstream'", [c["core"]]
        ).fetchone()
        base = json.loads(row[0]) if row and row[0] else None
    alone = {
        f"stream:{split}": res["note"]
        for split, res in ((raw.get("modes") or {}).get("stream") or {}).items()
        if isinstance(res, dict) and res.get("note")
    }
    out = {}
    for mode, r in results.items():
        if mode in alone and c.get("reasoning_parser"):  # before the parser engine: the tool parser alone
            out[mode] = ("not-applicable", alone[mode], r, 0)
            continue
        status, detail = verdict(mode, r, expected, None if mode == "nonstream" else base)
        out[mode] = (status, detail, r, 0)
    return out


def _store_map(db, p: Plan) -> None:
    conn = db.conn
    ids = dict(conn.execute("select label, id from versions"))
    with conn:
        done = set()
        for v, kind, name, *_ in p.map_rows:
            if (v, kind, name) not in done:
                conn.execute(
                    "delete from atlas_map where version_id = ? and kind = ? and name = ?",
                    [ids[v], kind, name],
                )
                done.add((v, kind, name))
        conn.executemany(
            "insert into atlas_map(version_id, kind, name, case_id, case_key, core_key, serving_key, status,"
            " detail) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(ids[v], *rest) for v, *rest in p.map_rows],
        )
        for case in p.cases.values():
            _case_row(conn, case)
