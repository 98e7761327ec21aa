"""Replay orchestration: versions -> trees -> environment -> child jobs -> the `Replay` answer and its
changes over the versions."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

from ..answers.model import Replay, ReplayCall, ReplayChange, ReplayMode, ReplayVersion
from .trees import ReplayError, cache_root, materialize

SPLITS = ("token", "char", "word")
_SPLIT = re.compile(r"^(token|char|word|random:\d+|interval:[1-9]\d*)$")
MODES = ("nonstream", "stream", "serving")
DEFAULT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]
# A sentinel the synthetic tokenizer makes one special token: a whole tag (<tool_call>, <|python_tag|>,
# [TOOL_CALLS], <｜tool▁sep｜>), not a fragment of one (<function=) nor a literal of the grammar ({).
_TOKEN = re.compile(r"^(<[^<>\s]{1,60}>|\[[A-Za-z_]{2,40}\])$")
_WRITTEN = re.compile(r"^SpecialTokens\.\w+\.value$")


def check_split(split: str) -> str:
    if not _SPLIT.match(split):
        raise ReplayError(f"unknown split {split!r}", "use token, char, word, random:SEED or interval:K")
    return split


def _rows(db, versions: list[str]) -> dict[str, dict]:
    rows = db.execute(
        f"select label, ref, commit_id, source, origin from versions where label in "
        f"({', '.join('?' * len(versions))})",
        versions,
    ).fetchall()
    return {
        r[0]: {"label": r[0], "ref": r[1], "commit_id": r[2], "source": r[3], "origin": r[4]} for r in rows
    }


def _registered(db, version: str, kind: str, name: str) -> str | None:
    """The name's code signature at the version (the digest of its own code files) when it is registered."""
    row = db.execute(
        "select coalesce(pm.code_sig, '') from parser_map pm join versions v on v.id = pm.version_id"
        " where v.label = ? and pm.kind = ? and pm.name = ?",
        (version, kind, name),
    ).fetchone()
    return None if row is None else row[0] or f"version {version}"


_SPECIALS: dict[tuple, tuple[list[str], list[str]]] = {}


def specials_of(
    db, name: str, version: str, kind: str, code_sig: str | None = None
) -> tuple[list[str], list[str]]:
    """The name's sentinels at a version (its card's sentinel facts) that are whole tokens, and those written
    as an expression the child resolves (SpecialTokens.x.value). They come from the name's own code files
    alone, so versions with the same code signature share them (computed once)."""
    key = (id(db), name, kind, code_sig) if code_sig else None
    if key in _SPECIALS:
        return _SPECIALS[key]
    out = _specials(db, name, version, kind)
    if key:
        _SPECIALS[key] = out
    return out


def _specials(db, name: str, version: str, kind: str) -> tuple[list[str], list[str]]:
    """The card's sentinels of the name (answers/card.py `name_sentinels`), without the rest of the card."""
    from ..answers.card import name_sentinels

    values = [s["value"] for s in name_sentinels(db, name, version, kind)]
    return (
        [v for v in dict.fromkeys(values) if _TOKEN.match(v)],
        [v for v in dict.fromkeys(values) if _WRITTEN.match(v)],
    )


def replay(
    db,
    name: str,
    at: str | None = None,
    tags: str | None = None,
    text: str | None = None,
    deltas: list | None = None,
    splits: list[str] | None = None,
    tools: list | None = None,
    tool_choice: str = "auto",
    reasoning_parser: str | None = None,
    tokenizer_file: str | None = None,
    modes: list[str] | None = None,
    timeout: float = 60.0,
    jobs: int | None = None,
    progress=None,
    notice=None,
    specials: list[str] | None = None,
    cancel=None,
    create_environment: bool = True,
) -> Replay:
    """`progress(message)`: a line per version replayed; `notice(message)`: the slow first-use steps (a
    tree materialized, the environment created). `specials`: the synthetic tokenizer's special tokens instead
    of the name's sentinels (a parser may read the vocabulary: mistral's takes `[ARGS]` in it for a v11
    tokenizer). `cancel` (a threading.Event): once set, the run's processes are ended and the versions not
    replayed yet are `killed` (a server whose client went away, or that is stopping)."""
    from ..answers.grep import select_versions
    from ..answers.versions import newest
    from . import env, runner

    if (text is None) == (deltas is None):
        raise ReplayError(
            "give the raw model output: --text FILE or --deltas FILE.json (one of them)",
            "--text takes the output as one text; --deltas the exact deltas of a log",
        )
    splits = [check_split(s) for s in (splits or ["token"])]
    modes = list(modes or MODES)
    for m in modes:
        if m not in MODES:
            raise ReplayError(f"unknown mode {m!r}", f"use {', '.join(MODES)}")
    if tool_choice not in ("auto", "required", "none") and not re.match(r"^[\w.\-]+$", tool_choice):
        raise ReplayError(
            f"--tool-choice {tool_choice!r} is not auto, required, none or a function name",
            "e.g. --tool-choice get_weather",
        )
    explicit = [t for t in specials if t] if specials is not None else None
    versions = select_versions(db, tags, at) if (at or tags) else [newest(db)]
    rows = _rows(db, versions)
    root = cache_root()
    timing: dict = {}
    t0 = time.monotonic()
    answers: dict[str, ReplayVersion] = {}
    job_list = []
    for v in versions:
        sig = _registered(db, v, "tool", name)
        if sig is None:
            answers[v] = _empty(v, "not-registered", f"{name} is not a registered tool parser at {v}")
            continue
        r_sig = _registered(db, v, "reasoning", reasoning_parser) if reasoning_parser else None
        if reasoning_parser and r_sig is None:
            answers[v] = _empty(
                v, "not-registered", f"{reasoning_parser} is not a registered reasoning parser at {v}"
            )
            continue
        specials, written = specials_of(db, name, v, "tool", sig)
        if explicit is not None:
            specials, written = list(explicit), []
        elif reasoning_parser:
            r_specials, r_written = specials_of(db, reasoning_parser, v, "reasoning", r_sig)
            specials, written = specials + r_specials, written + r_written
        tree = materialize(
            rows[v], root, notice, indexed_files(db, v) if rows[v]["source"] == "dir" else None
        )
        job_list.append(
            {
                "id": v,
                "version": v,
                "tree": str(tree),
                "name": name,
                "text": text,
                "deltas": deltas,
                "splits": splits,
                "modes": modes,
                "tools": DEFAULT_TOOLS if tools is None else tools,
                "tool_choice": tool_choice,
                "reasoning_parser": reasoning_parser,
                "tokenizer_file": tokenizer_file,
                "specials": specials,
                "unresolved_specials": written,
            }
        )
    timing["materialize"] = round(time.monotonic() - t0, 3)
    t0 = time.monotonic()
    python = env.interpreter(root, notice or (lambda m: None), create_environment) if job_list else None
    timing["environment"] = round(time.monotonic() - t0, 3)
    start = time.monotonic()
    stats: dict = {}
    digest = hashlib.sha256(str(python).encode()).hexdigest()[:12]
    preload = root / f"preload-{digest}.json" if python else None
    results = (
        runner.run(
            python,
            job_list,
            parallel=jobs or os.cpu_count() or 1,
            timeout=timeout,
            preload_file=preload,
            stats=stats,
            dataclass_file=root / f"dataclass-{digest}.json",
            root=root,
            progress=(lambda jid, done, n: progress(f"replayed {jid} ({done}/{n})")) if progress else None,
            cancel=cancel,
        )
        if job_list
        else {}
    )
    timing["replay"] = round(time.monotonic() - start, 3)
    timing.update(stats)
    for j in job_list:
        answers[j["id"]] = _version(j["id"], results[j["id"]])
    out_versions = [answers[v] for v in versions]
    mode_names = _mode_names(modes, splits if deltas is None else ["given"])
    return Replay(
        name=name,
        reasoning_parser=reasoning_parser,
        input="deltas" if deltas is not None else "text",
        splits=splits if deltas is None else ["given"],
        modes=mode_names,
        versions=out_versions,
        changes=changes(out_versions, mode_names),
        environment=os.environ.get("TPINDEX_REPLAY_PYTHON") or str(env.env_dir(root)),
        timing=timing,
    )


def indexed_files(db, version: str) -> dict[str, str]:
    """path -> blob id of the files the index holds for a version (what a directory held when it was
    indexed)."""
    return dict(db.execute("select file, blob_id from version_files where version = ?", [version]).fetchall())


def _mode_names(modes: list[str], splits: list[str]) -> list[str]:
    out = []
    for m in modes:
        if m == "stream":
            out += [f"stream:{s}" for s in splits]
        elif m == "serving":
            out += ["serving-full", "serving-stream"]
        else:
            out.append(m)
    return out


def _empty(v: str, status: str, error: str | None) -> ReplayVersion:
    return ReplayVersion(
        version=v,
        status=status,
        error=error,
        modes=[],
        split_sensitive=False,
        standins_touched=[],
        standins_imported=[],
        specials=[],
        tokens=None,
        notes=[],
        seconds=None,
        cpu_seconds=None,
    )


def _err(e: dict | None) -> str | None:
    if not e:
        return None
    where = f" at {e['where']}" if e.get("where") else ""
    return f"{e.get('type')}: {e.get('message')}{where}"


def _calls(raw: list[dict]) -> list[ReplayCall]:
    return [
        ReplayCall(
            name=c.get("name"),
            arguments=c.get("arguments"),
            arguments_raw=c.get("arguments_raw"),
            chunks=c.get("chunks"),
        )
        for c in raw or []
    ]


MAX_ERRORS = 20  # errors kept per mode (a parser failing on every one of 200000 deltas made a 59 MB answer)


def _mode(mode: str, r: dict) -> ReplayMode:
    raw = r.get("errors") or []
    errors = (
        [_err(r["error"])]
        if r.get("error")
        else [f"delta {e.get('delta')}: " + _err(e) if "delta" in e else _err(e) for e in raw[:MAX_ERRORS]]
    )
    if not r.get("error") and len(raw) > MAX_ERRORS:
        errors.append(f"... and {len(raw) - MAX_ERRORS} more errors like these")
    m = ReplayMode(
        mode=mode,
        entry=r.get("entry"),
        outcome="",
        tools_called=r.get("tools_called"),
        finish_reason=r.get("finish_reason"),
        calls=_calls(r.get("calls")),
        content=r.get("content"),
        reasoning=r.get("reasoning"),
        deltas=r.get("deltas"),
        messages=r.get("messages"),
        errors=errors,
    )
    m.outcome = outcome(m)
    return m


def outcome(m: ReplayMode) -> str:
    """What a mode's result is, comparably: the calls with their arguments, the content, the finish reason,
    or the error."""
    if m.errors and not m.calls and m.content is None and m.entry is None:
        return "error: " + m.errors[0].split(":")[0]
    parts = []
    for c in m.calls:
        if c.arguments is None:
            args = "no arguments"
        elif isinstance(c.arguments, str):
            args = f"unparsed {c.arguments!r}"
        else:
            args = json.dumps(c.arguments, sort_keys=True, ensure_ascii=False)
        parts.append(f"{c.name}({args})")
    text = "; ".join(parts) if parts else "no call"
    if m.content and m.content.strip():
        text += f" + content {m.content.strip()[:40]!r}"
    if m.reasoning and m.reasoning.strip():
        text += " + reasoning"
    if m.finish_reason:
        text += f" [{m.finish_reason}]"
    if m.errors:
        text += f" ({len(m.errors)} error{'s' if len(m.errors) > 1 else ''})"
    return text


def _version(v: str, r: dict) -> ReplayVersion:
    if r.get("not_replayable"):  # tpindex cannot drive this tree: no result of vLLM's, no error of its code
        return _empty(v, "not-replayable", r["not_replayable"])
    if r.get("status") in ("timeout", "crashed", "killed") or (r.get("error") and not r.get("modes")):
        out = _empty(v, r.get("status") if r.get("status") != "ok" else "error", _err(r.get("error")))
        out.seconds, out.cpu_seconds = r.get("seconds"), r.get("cpu_seconds")
        st = r.get("standins") or {}
        out.standins_imported = st.get("imported", [])
        return out
    modes: list[ReplayMode] = []
    raw = r.get("modes") or {}
    if "nonstream" in raw:
        modes.append(_mode("nonstream", raw["nonstream"]))
    for split, res in (raw.get("stream") or {}).items():
        modes.append(_mode(f"stream:{split}", res))
    if "serving" in raw:
        s = raw["serving"]
        if s.get("error"):
            modes += [_mode("serving-full", s), _mode("serving-stream", s)]
        else:
            modes.append(_mode("serving-full", {"entry": s.get("entry"), **(s.get("full") or {})}))
            modes.append(_mode("serving-stream", {"entry": s.get("entry"), **(s.get("stream") or {})}))
    streams = {m.outcome.split(" (")[0] for m in modes if m.mode.startswith("stream:")}
    st = r.get("standins") or {}
    used: dict[str, set[str]] = {}
    for module, attrs in (st.get("touched") or {}).items():
        used.setdefault(module.split(".")[0], set()).update(f"{module}.{a}" for a in attrs)
    touched = sorted(used)
    notes = list(r.get("notes") or [])
    for res in [raw.get("nonstream") or {}, *(raw.get("stream") or {}).values()]:
        if res.get("note") and res["note"] not in notes:
            notes.append(res["note"])
    if touched:
        notes.append(
            "the result may depend on stand-ins used while replaying: "
            + "; ".join(
                f"{t} ({', '.join(sorted(used[t])[:6])}{', ...' if len(used[t]) > 6 else ''})"
                for t in touched
            )
        )
    return ReplayVersion(
        version=v,
        status="ok",
        error=None,
        modes=modes,
        split_sensitive=len(streams) > 1,
        standins_touched=touched,
        standins_imported=st.get("imported", []),
        specials=r.get("specials") or [],
        tokens=r.get("tokens"),
        notes=notes,
        seconds=r.get("seconds"),
        cpu_seconds=r.get("cpu_seconds"),
    )


def cell(v: ReplayVersion, mode: str) -> str:
    if v.status != "ok":
        return v.status
    for m in v.modes:
        if m.mode == mode:
            return m.outcome
    return "-"


def changes(versions: list[ReplayVersion], modes: list[str]) -> list[ReplayChange]:
    """For each mode, each version whose outcome differs from the version before it (not-registered
    versions included: a name appearing or going is a change too)."""
    out = []
    for mode in modes:
        prev = None
        for v in versions:
            now = cell(v, mode)
            if prev is not None and now != prev:
                out.append(ReplayChange(mode=mode, version=v.version, before=prev, after=now))
            prev = now
    return out
