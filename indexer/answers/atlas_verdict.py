"""Verdicts of the behaviour atlas (issue 44): a mode's result against the case's known calls and against the
non-streamed result.

Two oracles. Where the case's calls are known (a rendered template, a literal whose calls were read), the
result must equal them: the names in order, the arguments as JSON values (a string argument compared without
the whitespace around it), the content trimmed (none and empty alike), the reasoning where the case has one,
and through serving `finish_reason` (`tool_calls` with calls, else `stop`). Always, a streamed or served
result must equal the non-streamed one (calls, content, reasoning). A detail is one line, `what: specifics`,
`what` naming the difference the same way every time (the behaviour ranges group cells by it).
"""

from __future__ import annotations

import json

MODES = ("nonstream", "stream:token", "stream:char", "serving-full", "serving-stream")
CORE_MODES = MODES[:3]
SERVING_MODES = MODES[3:]


def normalized(m) -> dict:
    """A replay mode's result (answers.model.ReplayMode) as the atlas stores it."""
    return {
        "entry": m.entry,
        "calls": [{"name": c.name, "arguments": c.arguments, "raw": c.arguments_raw} for c in m.calls],
        "content": m.content,
        "reasoning": m.reasoning,
        "finish_reason": m.finish_reason,
        "errors": list(m.errors or []),
    }


def _short(value, n: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = text.replace("\n", "\\n")
    return text if len(text) <= n else text[: n - 3] + "..."


def _same(a, b) -> bool:
    """JSON values equal, types included (true is not 1); strings without the whitespace around them."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a.strip() == b.strip()
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _text(value) -> str:
    return (value or "").strip()


def differs(got: dict, want: dict, finish: bool = False) -> str | None:
    """What differs from `want` ({calls, content, reasoning}), or None."""
    calls, wanted = got.get("calls") or [], want.get("calls") or []
    names = [c["name"] for c in calls]
    wanted_names = [c["name"] for c in wanted]
    if not calls and wanted:
        return f"no call: expected {', '.join(wanted_names)}"
    if calls and not wanted:
        return f"a call where none is: {', '.join(map(str, names))}"
    if len(calls) < len(wanted):
        return f"call missing: {len(calls)} of {len(wanted)} ({', '.join(map(str, names))})"
    if len(calls) > len(wanted):
        return f"extra call: {len(calls)} for {len(wanted)} ({', '.join(map(str, names))})"
    for c, w in zip(calls, wanted, strict=True):
        if c["name"] != w["name"]:
            return f"wrong name: {_short(c['name'])} (expected {w['name']})"
        args = c.get("arguments")
        if args is None and w["arguments"] is not None:
            return f"arguments missing: {w['name']} got none"
        if isinstance(args, str) and not isinstance(w["arguments"], str):
            return f"arguments not valid JSON: {w['name']} {_short(args)}"
        if not _same(args, w["arguments"]):
            return f"wrong arguments: {w['name']} {_short(args)} (expected {_short(w['arguments'])})"
    if _text(got.get("content")) != _text(want.get("content")):
        if not _text(want.get("content")):
            return f"content added: {_short(_text(got.get('content')))}"
        if not _text(got.get("content")):
            return f"content lost: expected {_short(_text(want.get('content')))}"
        return f"content differs: {_short(_text(got.get('content')))} (expected {_short(_text(want.get('content')))})"
    if want.get("reasoning") is not None and _text(got.get("reasoning")) != _text(want.get("reasoning")):
        return f"reasoning differs: {_short(_text(got.get('reasoning')) or 'none')} (expected {_short(want['reasoning'])})"
    if finish:
        expected = "tool_calls" if wanted else "stop"
        if got.get("finish_reason") != expected:
            return f"finish_reason {got.get('finish_reason')}: expected {expected}"
    return None


def failed(result: dict) -> bool:
    """A mode that gave no result at all (it raised before it produced anything)."""
    return (
        bool(result.get("errors"))
        and result.get("entry") is None
        and not result.get("calls")
        and result.get("content") is None
    )


def verdict(mode: str, result: dict, expected: dict | None, base: dict | None) -> tuple[str, str | None]:
    """(status, detail) of one mode's result. `expected`: the case's {calls, content, reasoning} (None: not
    known); `base`: the non-streamed result (None for nonstream itself, or when it failed)."""
    if failed(result):
        return "error", result["errors"][0]
    diff = None
    if expected is not None:
        diff = differs(result, expected, finish=mode.startswith("serving"))
    elif base is not None and not failed(base):
        d = differs(result, {**base, "reasoning": base.get("reasoning") or None})
        diff = f"differs from nonstream: {d}" if d else None
    errors = result.get("errors") or []
    if diff and errors:
        return "error", f"{errors[0]} ({diff})"
    if diff:
        return "wrong", diff
    return "ok", (f"errors logged: {errors[0]}" if errors else None)


def what(detail: str | None) -> str:
    """The reason a detail names (its part before the first colon)."""
    return (detail or "").split(":", 1)[0]
