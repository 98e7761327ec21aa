"""Replay orchestration: versions -> trees -> environment -> child jobs -> the `Replay` answer and its
changes over the versions."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

from ..answers.model import Replay, ReplayCall, ReplayChange, ReplayLog, ReplayMode, ReplayVersion
from .trees import ReplayError, cache_root, materialize, tree_dir

SPLITS = ("token", "char", "word")
_SPLIT = re.compile(r"^(token|char|word|random:\d+|interval:[1-9]\d*)$")
MODES = ("nonstream", "stream", "serving")
APIS = ("chat", "responses")
# Where a tree's Responses API serving code is (OpenAIServingResponses), newest layout first
RESPONSES_MODULES = (
    "vllm/entrypoints/openai/responses/serving.py",
    "vllm/entrypoints/openai/serving_responses.py",
)
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


# Request fields replay sets itself per mode (refused in --request, with what to use instead)
_REPLAY_SETS = {
    "stream": "replay runs streaming and non-streaming itself: choose with --mode",
    "n": "replay drives one choice",
}
# server flags whose names differ from the OpenAIServingChat parameter that reads them
_FLAG_ALIASES = {"enable_auto_tool_choice": "enable_auto_tools", "tool_call_parser": "tool_parser"}
_FLAGS_ELSEWHERE = {
    "tool_parser": "the parser is NAME",
    "reasoning_parser": "use --reasoning-parser",
    "tokenizer": "use --tokenizer",
    "tokenizer_mode": "use --tokenizer-mode",
}


def check_request(request: dict | None, chat_template_kwargs: dict | None = None) -> dict:
    """The request fields given (--request FILE, --chat-template-kwargs): a JSON object; the fields replay sets
    itself refused by name. Whether the version reads each field is checked in the child, per version."""
    out = dict(request or {})
    if request is not None and not isinstance(request, dict):
        raise ReplayError(
            "--request is not a JSON object", 'give the chat request\'s fields: {"tools": [...], ...}'
        )
    for k in out:
        if k in _REPLAY_SETS:
            raise ReplayError(f"request field {k!r} is set by replay", _REPLAY_SETS[k])
    if chat_template_kwargs is not None:
        if not isinstance(chat_template_kwargs, dict):
            raise ReplayError(
                "--chat-template-kwargs is not a JSON object",
                "e.g. --chat-template-kwargs '{\"enable_thinking\": true}'",
            )
        out["chat_template_kwargs"] = {**(out.get("chat_template_kwargs") or {}), **chat_template_kwargs}
    return out


def parse_server_args(args) -> tuple[dict, dict]:
    """--server-arg FLAG=VALUE (or FLAG alone: true) -> (OpenAIServingChat / ParserManager.get_parser keyword
    arguments, VLLM_ environment variables). Values: true/false, a number, JSON, else the text."""
    if isinstance(args, dict):
        items = list(args.items())
    else:
        items = []
        for a in args or []:
            flag, eq, value = str(a).partition("=")
            items.append((flag, value if eq else True))
    kwargs, env = {}, {}
    for flag, value in items:
        name = flag.strip().lstrip("-")
        if not name:
            raise ReplayError(
                f"--server-arg {flag!r} names no flag", "e.g. --server-arg tool-strict-level=strict"
            )
        if isinstance(value, str):
            value = _value(value)
        if name.startswith("VLLM_"):
            env[name] = "1" if value is True else "0" if value is False else str(value)
            continue
        key = name.replace("-", "_")
        key = _FLAG_ALIASES.get(key, key)
        if key in _FLAGS_ELSEWHERE:
            raise ReplayError(
                f"--server-arg {name} is not a server argument replay takes", _FLAGS_ELSEWHERE[key]
            )
        kwargs[key] = value
    return kwargs, env


def _value(text: str):
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return json.loads(text)
    except ValueError:
        return text


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
    kind: str = "tool",
    request: dict | None = None,
    chat_template_kwargs: dict | None = None,
    tokenizer_mode: str = "auto",
    eos: str | None = None,
    server_args=None,
    api: str = "chat",
    prompt: str | None = None,
    cancel=None,
    create_environment: bool = True,
) -> Replay:
    """`progress(message)`: a line per version replayed; `notice(message)`: the slow first-use steps (a
    tree materialized, the environment created). `specials`: the synthetic tokenizer's special tokens instead
    of the name's sentinels (a parser may read the vocabulary: mistral's takes `[ARGS]` in it for a v11
    tokenizer).

    `kind`: "tool" (NAME a tool parser, optionally with `reasoning_parser`) or "reasoning" (NAME a reasoning
    parser replayed on its own, as serving runs one without a tool parser). `request`: the chat request's
    fields as the version's ChatCompletionRequest reads them (tools, tool_choice, chat_template_kwargs,
    parallel_tool_calls, response_format, reasoning_effort, skip_special_tokens, include_reasoning, ...; a
    field a version does not define refuses that version by name); `chat_template_kwargs` is merged into it.
    `tokenizer_mode`: auto (a tekken.json or SentencePiece .model file is loaded as vLLM's
    `--tokenizer-mode mistral` loads it, through mistral_common), hf or mistral. `eos`: the end-of-sequence
    token's name (default: the tokenizer's own, or replay's synthetic one). `server_args`: ["FLAG=VALUE", ...]
    or a dict: OpenAIServingChat / ParserManager.get_parser arguments the version reads
    (enable-auto-tool-choice, tool-strict-level, exclude-tools-when-tool-choice-none, ...) and VLLM_ environment
    variables its envs.py defines; refused by name where a version does not read them.

    `prompt`: the rendered prompt the output continues (the chat template's text up to the generation), tokenized
    by the replay's tokenizer: its ids are what the version's code reads as the prompt's (`res.prompt_token_ids` of
    the serving modes' engine outputs, the engine's `parse_delta(prompt_token_ids=...)` and, where the version's
    full generator hands them over, `set_prompt_token_ids`; the stream mode's loop before the engine checks them
    where that version's loop does: a template rendered with thinking off ends the reasoning in the prompt).
    None: "" and [1], as before.

    `api`: "chat" (the chat-completion serving code: serving-full, serving-stream) or "responses" (the version's
    Responses API serving code, OpenAIServingResponses, on its own ResponsesRequest: responses-full,
    responses-stream, responses-completed; only the serving mode, the others calling the parser directly
    with a chat request; a version without it is `no-responses-api`).

    `cancel` (a threading.Event): once set, the run's processes are ended and the versions not replayed yet are
    `killed` (a server whose client went away, or that is stopping)."""
    from ..answers.grep import select_versions
    from ..answers.versions import newest
    from . import env, runner

    if (text is None) == (deltas is None):
        raise ReplayError(
            "give the raw model output: --text FILE or --deltas FILE.json (one of them)",
            "--text takes the output as one text; --deltas the exact deltas of a log",
        )
    if kind not in ("tool", "reasoning"):
        raise ReplayError(f"unknown kind {kind!r}", "use tool or reasoning")
    if kind == "reasoning" and reasoning_parser:
        raise ReplayError(
            "--kind reasoning replays NAME as the reasoning parser: --reasoning-parser is for a tool parser's pair",
            f"tpindex replay {reasoning_parser} --reasoning-parser {name}, or drop --reasoning-parser",
        )
    if tokenizer_mode not in ("auto", "hf", "mistral"):
        raise ReplayError(f"unknown tokenizer mode {tokenizer_mode!r}", "use auto, hf or mistral")
    if tokenizer_mode == "mistral" and not tokenizer_file:
        raise ReplayError("--tokenizer-mode mistral needs the tokenizer file", "--tokenizer tekken.json")
    request = check_request(request, chat_template_kwargs)
    server_kwargs, server_env = parse_server_args(server_args)
    splits = [check_split(s) for s in (splits or ["token"])]
    if api not in APIS:
        raise ReplayError(f"unknown API {api!r}", f"use {' or '.join(APIS)}")
    modes = list(modes or (MODES if api == "chat" else ["serving"]))
    for m in modes:
        if m not in MODES:
            raise ReplayError(f"unknown mode {m!r}", f"use {', '.join(MODES)}")
    if api == "responses" and set(modes) - {"serving"}:
        raise ReplayError(
            f"--api responses replays the Responses serving code only: mode "
            f"{', '.join(m for m in modes if m != 'serving')} calls the parser directly with a chat request",
            "drop --mode (or use --mode serving), or replay those modes without --api responses",
        )
    if tool_choice not in ("auto", "required", "none") and not re.match(r"^[\w.\-]+$", tool_choice):
        raise ReplayError(
            f"--tool-choice {tool_choice!r} is not auto, required, none or a function name",
            "e.g. --tool-choice get_weather",
        )
    explicit = [t for t in specials if t] if specials is not None else None
    versions = select_versions(db, tags, at) if (at or tags) else [newest(db)]
    rows = _rows(db, versions)
    from ..answers.versions import indexed

    order = indexed(db)
    at_ = {v: k for k, v in enumerate(order)}
    listed = any(at_.get(b, -1) - at_.get(a, -2) != 1 for a, b in zip(versions, versions[1:], strict=False))
    root = cache_root()
    timing: dict = {}
    t0 = time.monotonic()
    answers: dict[str, ReplayVersion] = {}
    job_list = []
    to_make = [v for v in versions if not (tree_dir(root, rows[v]) / ".complete").is_file()] if notice else []
    made = 0
    for v in versions:
        sig = _registered(db, v, kind, name)
        if sig is None:
            answers[v] = _empty(v, "not-registered", f"{name} is not a registered {kind} parser at {v}")
            continue
        r_sig = _registered(db, v, "reasoning", reasoning_parser) if reasoning_parser else None
        if reasoning_parser and r_sig is None:
            answers[v] = _empty(
                v, "not-registered", f"{reasoning_parser} is not a registered reasoning parser at {v}"
            )
            continue
        specials, written = specials_of(db, name, v, kind, sig)
        if explicit is not None:
            specials, written = list(explicit), []
        elif reasoning_parser:
            r_specials, r_written = specials_of(db, reasoning_parser, v, "reasoning", r_sig)
            specials, written = specials + r_specials, written + r_written
        files = indexed_files(db, v) if rows[v]["source"] == "dir" else None
        if v in to_make:
            made += 1
            t_tree = time.monotonic()
            tree = materialize(rows[v], root, None, files)
            notice(
                f"replay: materialized {v} ({made}/{len(to_make)} trees made once into the cache, "
                f"{time.monotonic() - t_tree:.1f} s)"
            )
        else:
            tree = materialize(rows[v], root, notice, files)
        responses_module = None
        if api == "responses":
            found = [m for m in RESPONSES_MODULES if (tree / m).is_file()]
            if not found:
                answers[v] = _empty(
                    v,
                    "no-responses-api",
                    f"{v} has no Responses API (its tree has no OpenAIServingResponses module: "
                    f"{' or '.join(RESPONSES_MODULES)})",
                )
                continue
            responses_module = found[0][: -len(".py")].replace("/", ".")
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
                # absolute: the child does not run in this process's working directory
                "tokenizer_file": os.path.abspath(tokenizer_file) if tokenizer_file else None,
                "tokenizer_mode": tokenizer_mode,
                "eos": eos,
                "specials": specials,
                "unresolved_specials": written,
                "kind": kind,
                "request": request,
                "server_args": server_kwargs,
                "server_env": server_env,
                "api": api,
                "responses_module": responses_module,
                "prompt_text": prompt,
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
    refused = [results[j["id"]].get("error") or {} for j in job_list]
    if refused and all(e.get("type") in ("RequestFieldError", "ServerArgError") for e in refused):
        what = (
            "--request / --chat-template-kwargs"
            if refused[0]["type"] == "RequestFieldError"
            else "--server-arg"
        )
        raise ReplayError(
            f"{refused[0]['message']} (at {', '.join(j['id'] for j in job_list[:3])}"
            f"{', ...' if len(job_list) > 3 else ''})",
            f"drop it from {what}, or replay versions that read it",
        )
    out_versions = [answers[v] for v in versions]
    mode_names = _mode_names(modes, splits if deltas is None else ["given"], api)
    return Replay(
        name=name,
        kind=kind,
        api=api,
        request=request,
        server_args=[f"{k}={v}" for k, v in {**server_kwargs, **server_env}.items()],
        listed=listed,
        reasoning_parser=reasoning_parser,
        input="deltas" if deltas is not None else "text",
        splits=splits if deltas is None else ["given"],
        modes=mode_names,
        versions=out_versions,
        changes=changes(
            out_versions, mode_names, db=db, name=name, kind=kind, reasoning_parser=reasoning_parser
        ),
        environment=os.environ.get("TPINDEX_REPLAY_PYTHON") or str(env.env_dir(root)),
        timing=timing,
    )


def indexed_files(db, version: str) -> dict[str, str]:
    """path -> blob id of the files the index holds for a version (what a directory held when it was
    indexed)."""
    return dict(db.execute("select file, blob_id from version_files where version = ?", [version]).fetchall())


RESPONSES_MODES = ("responses-full", "responses-stream", "responses-completed")


def _mode_names(modes: list[str], splits: list[str], api: str = "chat") -> list[str]:
    out = []
    for m in modes:
        if m == "stream":
            out += [f"stream:{s}" for s in splits]
        elif m == "serving" and api == "responses":
            out += list(RESPONSES_MODES)
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
    logged = [
        ReplayLog(
            level=x.get("level") or "",
            logger=x.get("logger") or "",
            message=x.get("message") or "",
            exception=x.get("exception"),
            where=x.get("where"),
            count=int(x.get("count") or 1),
        )
        for x in (r.get("logged") or [])[:MAX_ERRORS]
    ]
    m = ReplayMode(
        logged=logged,
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
        unsupported=r.get("unsupported"),
    )
    m.outcome = outcome(m)
    return m


def outcome(m: ReplayMode) -> str:
    """What a mode's result is, comparably: the calls with their arguments, the content, the finish reason,
    or the error."""
    if m.unsupported:
        return "unsupported by this version"
    if m.errors and not m.calls and m.content is None and m.entry is None:
        return "error: " + m.errors[0].split(":")[0]
    parts = []
    for c in m.calls:
        if c.arguments is None:
            args = "no arguments"
        elif isinstance(c.arguments, str):
            args = f"unparsed {c.arguments!r}"
        else:  # whole, keys in the order the version's code produced them
            args = json.dumps(c.arguments, ensure_ascii=False)
        parts.append(f"{c.name}({args})")
    text = "; ".join(parts) if parts else "no call"
    if m.content and m.content.strip():
        text += f" + content {m.content.strip()!r}"
    if m.reasoning and m.reasoning.strip():
        text += " + reasoning"
    if m.finish_reason:
        text += f" [{m.finish_reason}]"
    if m.errors:
        first = m.errors[0].split(": ", 1)[-1] if m.errors[0].startswith("delta ") else m.errors[0]
        text += f" ({len(m.errors)} error{'s' if len(m.errors) > 1 else ''}: {first.split(':')[0]})"
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
    if "responses" in raw:
        s = raw["responses"]
        for mode, part in zip(RESPONSES_MODES, ("full", "stream", "completed"), strict=True):
            modes.append(
                _mode(mode, s if s.get("error") else {"entry": s.get("entry"), **(s.get(part) or {})})
            )
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
    startup = r.get("startup") or {}
    start_line = None
    if startup:
        start_line = startup.get("detail") or ""
        if startup.get("error"):
            start_line += ": " + (_err(startup["error"]) or "")
    return ReplayVersion(
        prompt=r.get("prompt"),
        startup=start_line,
        startup_logged=[
            f"{x.get('level')} {x.get('logger')}: {x.get('message')}" for x in startup.get("logged") or []
        ],
        tokenizer=r.get("tokenizer"),
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


def changes(
    versions: list[ReplayVersion],
    modes: list[str],
    db=None,
    name: str | None = None,
    kind: str = "tool",
    reasoning_parser: str | None = None,
) -> list[ReplayChange]:
    """For each mode, each version whose outcome differs from the version before it (not-registered
    versions included: a name appearing or going is a change too), naming the code diff between the two
    (`tpindex diff --code NAME A B`), whether NAME's own code differs between them at all (its code signature;
    when it does not, the change is in other code the version runs), the same for the reasoning parser
    replayed with it, and, on a database built from a clone, the commits from A to B that touched the name's
    code files."""
    out = []
    commits: dict[tuple[str, str], list[str] | None] = {}

    def differs(parser: str | None, k: str, a: str, b: str) -> bool | None:
        if db is None or not parser:
            return None
        sigs = [_code_sig(db, v, k, parser) for v in (a, b)]
        return None if not all(sigs) else sigs[0] != sigs[1]

    for mode in modes:
        prev = prev_v = None
        for v in versions:
            now = cell(v, mode)
            if prev is not None and now != prev:
                pair = (prev_v, v.version)
                if db is not None and name and pair not in commits:
                    commits[pair] = _commits(db, name, kind, *pair)
                out.append(
                    ReplayChange(
                        mode=mode,
                        version=v.version,
                        before=prev,
                        after=now,
                        previous=prev_v,
                        code_diff=f"tpindex diff --code {name} {prev_v} {v.version}" if name else None,
                        commits=commits.get(pair),
                        code_changed=differs(name, kind, *pair),
                        reasoning_code_changed=differs(reasoning_parser, "reasoning", *pair),
                    )
                )
            prev, prev_v = now, v.version
    return out


def _code_sig(db, version: str, kind: str, name: str) -> str | None:
    """NAME's code signature at a version (None when it is not registered there or has none)."""
    row = db.execute(
        "select pm.code_sig from parser_map pm join versions v on v.id = pm.version_id"
        " where v.label = ? and pm.kind = ? and pm.name = ?",
        (version, kind, name),
    ).fetchone()
    return row[0] if row and row[0] else None


def _commits(db, name: str, kind: str, a: str, b: str) -> list[str] | None:
    """The commits from A to B touching NAME's code files ("sha12 subject"), or None without history."""
    from ..answers.history import log
    from ..core.problems import Problem

    try:
        has = db.execute("select count(*) from history_tips").fetchone()[0]
    except Exception:  # noqa: BLE001 - a database without the history tables: no commits to name
        return None
    if not has:
        return None
    try:
        answer = log(db, name, a, b, kind)
    except Problem:
        return None
    return [f"{c.sha[:12]} {c.subject}" for k in answer.kinds for c in k.commits]
