"""`fit` run where it can be stopped, on an input of a size it reads whole.

fit runs code it does not own on text it does not own: the candidates' own regular expressions (vLLM's: one
of them backtracks exponentially, 106 s on 101 characters, inside one C call that holds the GIL) and the
given chat template (Jinja loops of any length, strings of any size). Whatever asks (the command line, a page,
an MCP tool), the whole answer is computed in a child process (core/bounded.py) with a time limit
(FIT_TIME_LIMIT, or the caller's) and a memory limit (FIT_MEMORY): a server's other requests, its event loop
and its signal handlers go on meanwhile, and the child is killed at the limit.

--replay runs the top candidates with the version's own code, which has its own child processes and limits
(replay/): it is not run inside fit's child. The child asks for each replay it needs by ending with the
request; the parent runs it and starts the child again with the answers so far (fit is a function of its
input: each pass asks the same questions, up to REPLAYED of them).

Sizes (`sized`): a chat template, a tokenizer_config.json or a raw output is read up to MAX_TEXT characters,
a JSON file (a tokenizer.json holds the model's vocabulary: 7-17 MB) up to MAX_JSON, whole; a larger file is
refused with a hint, never cut (a cut tokenizer.json was read as a raw output).
"""

from __future__ import annotations

from collections.abc import Callable

from .versions import AnswerError

FIT_TIME_LIMIT = 30.0  # seconds the answer may take (tpindex fit --time-limit)
FIT_MEMORY = 1 << 30  # bytes its process may add to what it starts with
MAX_TEXT = 4 << 20  # characters of a chat template, tokenizer_config.json or raw output
MAX_JSON = 64 << 20  # characters of a JSON file (a tokenizer.json, whole)
HINT = (
    "give fit a smaller file (a chat template, a tokenizer_config.json or tokenizer.json, a raw output), or more"
    " time (--time-limit); a template that loops or builds huge strings cannot be read"
)


def sized(text: str, name: str = "FILE") -> str:
    """The text when fit reads it whole; else an AnswerError saying what is too large (never a cut)."""
    if len(text) <= MAX_TEXT:
        return text
    if text.lstrip("\ufeff \t\r\n")[:1] == "{":
        if len(text) <= MAX_JSON:
            return text
        raise AnswerError(
            f"{name} is larger than {MAX_JSON >> 20} MB",
            "a tokenizer.json of that size is not one fit reads; give its tokenizer_config.json or its"
            " added_tokens",
        )
    raise AnswerError(
        f"{name} is larger than {MAX_TEXT >> 20} MB and not JSON",
        "give a chat template, a tokenizer_config.json, a tokenizer.json (JSON up to"
        f" {MAX_JSON >> 20} MB) or a raw model output",
    )


class _Wanted(Exception):
    """In the child: a replay the answer needs, which the parent runs."""

    def __init__(self, key: tuple):
        super().__init__(key)
        self.key = key


def run(
    db,
    text: str | None,
    at: str | None,
    kind: str | None,
    name: str,
    replay: Callable | None = None,
    seconds: float | None = None,
    cancel=None,
    prove: Callable | None = None,
    template_path: str | None = "FILE",
    model: str | None = None,
):
    """answers.fit.fit(...) (or, with `model`, fit_model) computed in a child process (see the module);
    `replay(name, version, output)` and `prove(tool, version, output, reasoning, prompt=, chat_template_kwargs=)`
    run in this one. `seconds`: the time limit of each pass (default FIT_TIME_LIMIT); `cancel`: a
    threading.Event whose setting stops it (Cancelled)."""
    from ..core import bounded
    from .grep import database_file

    if model is None:
        text = sized(text or "", name)
    file = database_file(db)
    done: dict[tuple, object] = {}
    calls = {"replay": replay, "prove": prove}
    while True:
        out = bounded.run(
            _fit_file,
            (file, text, at, kind, name, replay is not None, prove is not None, template_path, model, done),
            seconds or FIT_TIME_LIMIT,
            "fit",
            memory=FIT_MEMORY,
            hint=HINT,
            cancel=cancel,
        )
        if out[0] == "fit":
            return out[1]
        what, args, kwargs = out[1]
        done[_key(what, args, kwargs)] = calls[what](*args, **kwargs)


def _key(what: str, args: tuple, kwargs: dict) -> tuple:
    """A replay's question as a key of `done` (hashable: the keyword arguments as sorted pairs, their dict
    values as JSON)."""
    import json

    return (
        what,
        tuple(args),
        tuple(
            sorted(
                (k, json.dumps(v, sort_keys=True) if isinstance(v, dict) else v) for k, v in kwargs.items()
            )
        ),
    )


def _fit_file(
    file,
    text: str | None,
    at,
    kind,
    name: str,
    replaying: bool,
    proving: bool,
    template_path,
    model,
    done: dict,
):
    """In the child: the answer on a connection of its own, or ("want", key) when it needs a replay not in
    `done`."""
    from ..store.database import open_reader
    from .fit import fit, fit_model

    def asker(what: str):
        def ask(*args, **kwargs):
            key = _key(what, args, kwargs)
            if key in done:
                return done[key]
            raise _Wanted((what, tuple(args), kwargs))  # the parent calls it as it was asked

        return ask

    db = open_reader(file)
    try:
        prove = asker("prove") if proving else None
        if model is not None:
            return ("fit", fit_model(db, model, at, kind, prove))
        return (
            "fit",
            fit(
                db,
                text,
                at,
                kind,
                name,
                asker("replay") if replaying else None,
                prove=prove,
                template_path=template_path,
            ),
        )
    except _Wanted as w:
        return ("want", w.key)
    finally:
        db.conn.close()
