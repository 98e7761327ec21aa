"""`fit`: which parser fits my model, from a chat template, a tokenizer config, a tokenizer.json or a raw output.

What the file is, is read from its content, never from its name (`read_input`):

- a JSON object with `added_tokens` (and a `model`): a **tokenizer.json**, its added tokens (and, for the
  vocabulary check, the model's vocabulary);
- a JSON object with `chat_template` (a string, or a list of named templates: `tool_use` is taken first) or
  `added_tokens_decoder`: a **tokenizer_config.json**, its template and its added tokens with their special flag;
- text with Jinja blocks (`{% ... %}`, `{{ ... }}`) that compiles: a **chat template**;
- anything else: a **raw model output** (text captured with `skip_special_tokens: false`).

A template is rendered (markup.render) on a conversation with one tool call, so what is compared is the call
markup it makes the model see and produce, its tools prompt and its generation prompt, besides its text.

Each tool parser (or reasoning parser) of the version is then scored by the evidence its own facts give
(the card's: indexer/answers/card.py) against the input; each piece of evidence is kept, for or against:

| evidence | for | against |
|---|---|---|
| sentinel | one of its token strings is in the call markup (+3 each), the tools prompt (+2), the vocabulary (+2) or the template's text (+1); a tool parser is judged by its call markup only, a reasoning parser by its think markup only (the token strings more reasoning-only source files hold than tool-only ones: `think_tokens`) | |
| look-alike | a string that reads like one of its sentinels (+2 each, at most +8) | ... but is made of other code points, named: as written the parser does not find it (-1 for each set of differing code points) |
| regex | one of its own regular expressions (regexes_v) matches the call markup (+4; +2 when it also matches calls of other shapes, a wide net; +1 for a small part of it) | |
| shape | the call markup has the shape the parser expects, from its shipped templates' rendered calls, its sentinels (`<function=`, `<arg_key>`, `<invoke name=`), its regular expressions run on a call of each shape (+3; agreeing details +1) | another shape (-3); details that differ (-1): tokens around the JSON or none, a list, the argument key |
| markup | | a token of the call markup that the parser neither looks for nor renders (-1 each, at most -4; a note only for a parser holding tokens defined outside vLLM's tree, unless another parser looks for that token) |
| missing | | a token string it looks for that the input lacks, its think markup aside (-1 each, at most -2) |
| template | its shipped template renders the same call markup (+3), or is the file itself (+2) | |
| vocabulary | (sentinels in the vocabulary, above) | a token it looks for is not in the tokenizer (-1 each) |
| stripped | (note: its adjust_request sets skip_special_tokens = False, or under which condition) | a token it needs is special in the tokenizer and its adjust_request never sets skip_special_tokens = False: vLLM strips it before the parser sees it (-1 each) |

A stripped or missing token and a look-alike weigh little in the score (the parser is still the closest
family) but stop it from fitting as written.

Parsers are ranked by their score, then by how many of their sentinels were found (ties share a rank, and
the next rank counts those before it: 1, 1, 3); a tool parser fits when the best has a score of at
least FIT_SCORE and nothing that stops it as written (a look-alike instead of the token itself, a stripped
token, a missing start token). The answer names the chat template the version ships for the winner (the
index's template matching), with a character diff of its call markup against the given template's, and ends
with the `vllm serve ...` line, or says that nothing fits and what the closest parsers expect.

No model or parser name is typed into this module: every fact comes from the indexed version.

`--replay` (a raw output only): the first REPLAYED tool candidates by rank are run on the output by the version's
own code (indexer/replay/, through the `replay` callable Index.fit passes: this module never imports it), non-streaming
and streamed one token per delta, and what each made of it is evidence: a call made (+4) or none (-4: the
parser does not fit as written), call-markup tokens left in the content (-1), streaming that calls other
functions than the non-streaming result (-1). The candidates are then ranked again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from . import markup
from .docpairs_model import Documented
from .fit_model import Evidence
from .pairing import Pair
from .plain import Model
from .proof import Proof
from .versions import AnswerError, newest, require

FIT_SCORE = 5  # the least score of a tool parser that fits
SHOWN = 5  # candidates per kind in text and Markdown (JSON has every one with evidence for it)
MAX_REGEX_TEXT = 2000  # characters a parser's regular expression is run on (the call markup; bounded)
MAX_INPUT = 4 << 20  # characters read from FILE
REPLAYED = 3  # tool candidates --replay runs on a raw output (the first by rank with a positive score)
REPLAY_WEIGHT = 4  # a call made by the parser's own code (for), or none (against)


# -- the answer ------------------------------------------------------------------------------------------


@dataclass
class Candidate(Model):
    """A parser of the version with the evidence the input gives for and against it."""

    kind: str
    name: str
    rank: int  # 1 + how many candidates have more evidence (a higher score, or as high with more sentinels)
    score: int
    impl: str
    real_class: str | None
    real_file: str | None
    aliases: list[str]
    expects: str  # what it expects, in words: its call shape and main tokens
    chat_templates: list[str]  # the chat templates the version ships for it (the index's matching)
    evidence: list[Evidence]
    _calls: dict[str, str] = field(default_factory=dict)  # internal: its templates' call markup, by path


@dataclass
class Observed(Model):
    """What the input is and what it shows."""

    input: str  # template | tokenizer_config | tokenizer | output
    why: str  # how that was read from the content
    call: str | None  # the tool-call markup (a template: what it renders for one call; an output: the text)
    shapes: list[str]  # markup.shapes of the call markup (of the tools prompt when it renders no call)
    tokens: list[str]  # the token strings of the call markup
    prompt_tokens: list[str]  # ... of the tools prompt
    vocabulary: int | None  # the tokenizer's added tokens (tokenizer files)
    special: list[str]  # those marked special
    notes: list[str]


@dataclass
class Piece(Model):
    op: str  # " " kept, "-" only in the shipped template's call markup, "+" only in the given one's
    text: str


@dataclass
class TemplateDiff(Model):
    """The given template's call markup against the one the version ships for the winner."""

    template: str
    identical: bool  # the same call markup
    same_file: bool  # the same file
    similarity: float
    shipped_call: str
    given_call: str
    inline: str  # the diff as one line: [-removed-]{+added+}
    pieces: list[Piece]


@dataclass
class ReplayRun(Model):
    """--replay: one candidate run on the raw output by the version's own code (tpindex replay)."""

    name: str
    version: str
    status: str  # the replay's: ok, error, timeout, crashed, killed, not-registered
    error: str | None
    calls: list[str]  # non-streaming: name(arguments as JSON)
    streamed: list[str] | None  # streamed one token per delta (null: not run)
    content: str | None  # the non-streaming content
    leaked: list[str]  # tokens of the call markup left in the content (non-streaming or streamed)
    outcomes: dict[str, str]  # mode -> the replay's outcome


@dataclass
class Fit(Model):
    """`tpindex fit FILE --format json`: the parsers of a version ranked by the evidence FILE gives."""

    version: str
    file: str
    kind: str | None  # the kind asked (null: both)
    observed: Observed
    tool: list[Candidate]
    reasoning: list[Candidate]
    fits: bool
    template: str | None  # the chat template the version ships for the winner
    template_diff: TemplateDiff | None
    serve: str | None  # the vllm serve line, when a tool parser fits
    verdict: str
    replay: list[ReplayRun] | None = None  # --replay: the top candidates run on the output; null: not run
    model: str | None = (
        None  # the model asked (--model) or named by the file (a tokenizer_config's name_or_path)
    )
    documented: Documented | None = None  # what the version's documentation pairs with that model
    pair: Pair | None = None  # the serve line's pair and the evidence that decided it
    proof: Proof | None = None  # the pair replayed on the model's outputs (null: not asked)


# -- the input --------------------------------------------------------------------------------------------


@dataclass
class Input:
    kind: str
    why: str
    templates: list[tuple[str, str]] = field(default_factory=list)  # (name, Jinja source)
    output: str | None = None
    vocab: dict[str, bool] | None = None  # added token -> special
    plain_vocab: set[str] | None = None  # the model's vocabulary (tokenizer.json), for whole-token checks
    model: str | None = None


def read_input(text: str) -> Input:
    """What the file is, from its content."""
    if not text.strip():
        raise AnswerError(
            "the file is empty",
            "give a chat template, a tokenizer_config.json, a tokenizer.json or a model output",
        )
    stripped = text.lstrip("\ufeff").strip()
    data = None
    if stripped[:1] in "{[":
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            data = None
            if '"added_tokens' in stripped[: 1 << 16]:  # a tokenizer file, cut or damaged: no raw output
                raise AnswerError(
                    "the file reads like a tokenizer.json or tokenizer_config.json but is not valid JSON",
                    "give the whole file (a download cut short?)",
                ) from None
    if (
        isinstance(data, dict)
        and isinstance(data.get("added_tokens"), list)
        and ("model" in data or "normalizer" in data)
    ):
        vocab = {
            t["content"]: bool(t.get("special"))
            for t in data["added_tokens"]
            if isinstance(t, dict) and isinstance(t.get("content"), str)
        }
        model = data.get("model")
        plain = (
            set(model["vocab"]) if isinstance(model, dict) and isinstance(model.get("vocab"), dict) else None
        )
        return Input(
            "tokenizer",
            "a JSON object with added_tokens and a model: a tokenizer.json",
            vocab=vocab,
            plain_vocab=plain,
        )
    if isinstance(data, dict) and ("chat_template" in data or "added_tokens_decoder" in data):
        vocab = {}
        for t in (data.get("added_tokens_decoder") or {}).values():
            if isinstance(t, dict) and isinstance(t.get("content"), str):
                vocab[t["content"]] = bool(t.get("special"))
        for t in data.get("additional_special_tokens") or []:
            content = t.get("content") if isinstance(t, dict) else t
            if isinstance(content, str):
                vocab[content] = True
        got = Input(
            "tokenizer_config",
            "a JSON object with chat_template / added_tokens_decoder: a tokenizer_config.json",
            vocab=vocab or None,
            model=data.get("name_or_path") if isinstance(data.get("name_or_path"), str) else None,
        )
        chat = data.get("chat_template")
        if isinstance(chat, str):
            got.templates = [("chat_template", chat)]
        elif isinstance(chat, list):
            named = [
                (t.get("name") or f"#{i}", t.get("template"))
                for i, t in enumerate(chat)
                if isinstance(t, dict)
            ]
            named = [(n, t) for n, t in named if isinstance(t, str)]
            named.sort(key=lambda nt: (nt[0] != "tool_use", nt[0] != "default"))
            got.templates = named
        return got
    if ("{%" in text or "{{" in text) and _compiles(text):
        return Input(
            "template",
            "Jinja blocks ({% ... %} / {{ ... }}) that compile: a chat template",
            templates=[("template", text)],
        )
    return Input(
        "output", "neither JSON of a tokenizer nor a Jinja template: a raw model output", output=text
    )


def _compiles(text: str) -> bool:
    from ..extract.templates import environment

    try:
        environment().parse(text)
        return True
    except Exception:  # noqa: BLE001 - not Jinja
        return False


@dataclass
class Observation:
    input: Input
    call: str = ""  # the call markup (a rendered call, or the raw output)
    reply: str = ""  # what a plain reply renders in its place (its tokens are the turn's, not the call's)
    prompt: str = ""  # the tools prompt
    generation: str = ""  # the generation prompt
    reasoning: str = ""  # what a reasoning message renders
    text: str = ""  # the template's source, or the output
    rendered: markup.Rendered | None = None
    template_name: str | None = None
    blob_id: str | None = None  # the template's git blob id (a shipped template is known by it)
    notes: list[str] = field(default_factory=list)
    # think markup: the token strings more reasoning-only source files hold than tool-only ones (think_tokens)
    reasoning_tokens: set[str] = field(default_factory=set)
    owners: dict[str, list[str]] = field(
        default_factory=dict
    )  # a tool parser's sentinel -> the names holding it
    _folded: dict[str, str] = field(default_factory=dict)

    def folded(self, text: str) -> str:
        if text not in self._folded:
            self._folded[text] = markup.skeleton(text)
        return self._folded[text]

    def everywhere(self) -> str:
        return "\n".join((self.call, self.reply, self.prompt, self.generation, self.reasoning, self.text))

    def region(self) -> str:
        """The part of the call markup a parser's regular expressions are run on."""
        return self.call.strip()[:MAX_REGEX_TEXT]


def observe(inp: Input) -> Observation:
    ob = Observation(inp)
    if inp.output is not None:
        ob.call = ob.text = inp.output[:MAX_INPUT]
        first = [m.start() for m in markup.TOKEN.finditer(ob.call)][:1]
        if first and len(ob.call) > MAX_REGEX_TEXT:  # bound the text the regexes see: from the first token
            ob.call = ob.call[max(0, first[0] - 200) :]
        return ob
    for name, source in inp.templates:
        r = markup.render(source)
        if ob.rendered is None or (r.call and not ob.rendered.call):
            ob.rendered, ob.template_name = r, name
        if r.call:
            break
    if ob.rendered is not None:
        r = ob.rendered
        ob.call, ob.reply, ob.prompt, ob.generation, ob.reasoning = (
            r.call,
            r.reply,
            r.prompt,
            r.generation,
            r.reasoning,
        )
        ob.text = dict(inp.templates)[ob.template_name]
        from ..sources import git_blob_id

        ob.blob_id = git_blob_id(
            ob.text.encode("utf-8", errors="surrogateescape")
        )  # the same file is the same blob
        if r.error:
            ob.notes.append(f"the template {r.error}; read as text only")
        ob.notes += r.notes
        if len(inp.templates) > 1:
            ob.notes.append(
                f"of its chat templates ({', '.join(n for n, _ in inp.templates)}), "
                f"{ob.template_name} was read"
            )
    return ob


# -- the parsers' side --------------------------------------------------------------------------------------

_SHAPE_EXAMPLES = {  # one call of each shape, for running a parser's regular expressions on
    "pythonic": f"[{markup.TOOL_NAME}({markup.ARG}='{markup.VALUE}')]",
    "json": json.dumps({"name": markup.TOOL_NAME, "arguments": {markup.ARG: markup.VALUE}}),
    "json-list": json.dumps([{"name": markup.TOOL_NAME, "arguments": {markup.ARG: markup.VALUE}}]),
    "call-braces": f"call:{markup.TOOL_NAME}{{{markup.ARG}:{markup.VALUE}}}",
}


@dataclass
class Profile:
    """What a parser's facts say it expects."""

    card: object  # answers.card.Card
    sentinels: list[dict]  # {value, how, attribute, file, line, non_ascii}
    regexes: list[dict]
    templates: list[tuple[str, markup.Rendered, str]]  # (path, rendered, blob id) of its shipped templates
    keeps_special: list[
        dict
    ]  # adjust_request's `skip_special_tokens = False` settings ({guard, class, line})
    shapes: dict[str, str] = field(default_factory=dict)  # primary shape -> where it is known from
    details: set[str] = field(default_factory=set)  # qualifiers its shipped templates' calls have
    template_tokens: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.card.name

    def expects(self) -> str:
        shapes = [markup.DESCRIBE[s] for s in self.shapes]
        toks = [s["value"] for s in self.sentinels if s["how"] != "reference"][:4]
        toks += [t for t in sorted(self.template_tokens) if t not in toks][: max(0, 4 - len(toks))]
        refs = [s["value"] for s in self.sentinels if s["how"] == "reference"][:2]
        parts = []
        if shapes:
            parts.append(" or ".join(shapes))
        if toks:
            parts.append("tokens " + " ".join(toks))
        if refs:
            parts.append("tokens defined outside vLLM's tree (" + ", ".join(refs) + ")")
        return "; ".join(parts) or "no token string or call shape readable from its code"


def _distinctive(value: str) -> bool:
    """A sentinel worth looking for in a text: a token, or a string of 3+ characters with a letter (not `>`
    or `{`)."""
    s = value.strip()
    return bool(markup.TOKEN.search(s)) or (len(s) >= 3 and any(c.isalpha() for c in s))


def _whole_token(value: str) -> bool:
    """A sentinel a tokenizer would hold as one token: one `<...>` or `[...]` without spaces or `=`."""
    return bool(markup.TOKEN.fullmatch(value)) and not value.endswith("=")


def profiles(db, version: str, kinds: list[str], templates_too: bool = True) -> dict[str, list[Profile]]:
    """kind -> the profile of each parser of that kind at the version."""
    from . import card as cards_mod

    cards = [c for c in cards_mod.cards(db, None, version) if c.kind in kinds]
    owned = cards_mod._owned(db, version)
    regex_rows = (
        [
            dict(r)
            for r in db.query("select * from regexes_v where version = ? order by file, line", [version])
        ]
        if _has_view(db, "regexes_v")
        else []
    )
    out: dict[str, list[Profile]] = {k: [] for k in kinds}
    for c in cards:
        mine = {f["file"] for f in c.code_files if not f["shared"]}
        classes = {c.real.class_, c.registered.class_, c.wrapper.class_ if c.wrapper else None}
        classes |= {m["class"] for m in c.methods if m["file"] in mine}
        classes.discard(None)
        regs = [
            r
            for r in regex_rows
            if r["file"] in mine
            and not cards_mod._overridden(r, c._hidden)  # rebound by a more derived class
            and (
                r["class"] is None
                or r["class"].split(".")[0] in classes
                or (r["file"], r["class"].split(".")[0]) not in owned
            )
        ]
        sents = [
            {
                "value": s["value"],
                "how": s["places"][0]["how"],
                "attribute": ", ".join(s["attributes"]) or None,
                "file": s["places"][0]["file"],
                "line": s["places"][0]["line"],
                "non_ascii": s["non_ascii"],
            }
            for s in c.sentinels
        ]
        keeps = [
            {"guard": st["guard"], "class": a["class"], "file": a["file"], "line": st["line"]}
            for a in c.adjust_request
            for st in a["sets"]
            if st["field"] == "skip_special_tokens" and st["value"] == "False"
        ]
        shipped = []
        for m in c.chat_templates if templates_too else []:
            blob_id, r = markup.shipped(db, version, m["file"])
            if r is not None:  # else its text is not stored (a database built by an older tpindex)
                shipped.append((m["file"], r, blob_id))
        p = Profile(c, sents, regs, shipped, keeps)
        _expected_shapes(p)
        out[c.kind].append(p)
    return out


def _has_view(db, name: str) -> bool:
    return db.execute("select 1 from sqlite_master where name = ?", [name]).fetchone() is not None


def _expected_shapes(p: Profile) -> None:
    for path, r, _ in p.templates:
        if r.call:
            found = markup.shapes(r.call)
            for s in found:
                if s in markup.PRIMARY:
                    p.shapes.setdefault(s, f"its shipped template {path}")
                else:
                    p.details.add(s)
            p.template_tokens |= set(markup.tokens(r.call)) - set(markup.tokens(r.reply))
    values = " ".join(s["value"] + ("x>" if s["value"].endswith("=") else "") for s in p.sentinels)
    for s in markup.shapes(values):
        if s in markup.PRIMARY and s != "json":
            p.shapes.setdefault(s, "its sentinels")
    for shape, example in _SHAPE_EXAMPLES.items():
        hit = _best_regex(p.regexes, example)
        if hit and hit[1] >= 0.6:
            p.shapes.setdefault(
                shape.split("-")[0] if shape != "call-braces" else shape,
                f"its regular expression {hit[0]['attribute'] or hit[0]['pattern'][:40]}",
            )


_COMPILED: dict[tuple[str, str | None], object] = {}


def _compiled(r: dict):
    key = (r["pattern"], r["flags"])
    if key not in _COMPILED:
        flags = 0
        for f in (r["flags"] or ("DOTALL" if r["flags"] is None else "")).split("|"):
            flags |= getattr(re, f, 0) if f else 0
        try:
            _COMPILED[key] = re.compile(r["pattern"], flags)
        except (re.error, OverflowError, RecursionError, ValueError):
            _COMPILED[key] = None
    return _COMPILED[key]


def _best_regex(regexes: list[dict], text: str) -> tuple[dict, float] | None:
    """The regular expression matching most of the text, with the share of it its match covers."""
    text = text.strip()
    best = None
    if not text:
        return None
    for r in regexes:
        rx = _compiled(r)
        if rx is None:
            continue
        try:
            m = rx.search(text)
        except (RecursionError, MemoryError):
            continue
        if m and m.end() > m.start():
            share = (m.end() - m.start()) / len(text)
            if best is None or share > best[1]:
                best = (r, share)
    return best


# -- scoring ----------------------------------------------------------------------------------------------


def _where(s: dict) -> str:
    what = s["attribute"] or ("in a regex" if s["how"] == "regex" else "a literal")
    return f"{what}, {s['file']}:{s['line']}"


def _cap(items: list[Evidence], cap: int) -> list[Evidence]:
    """Evidence of one kind adds at most `cap` (or takes at most -cap) to the score; the rest is kept, at 0."""
    total = 0
    for e in items:
        if abs(total + e.weight) > cap:
            e.weight = (cap - abs(total)) * (1 if e.weight > 0 else -1)
        total += e.weight
    return items


def score(p: Profile, ob: Observation, kind: str) -> list[Evidence]:
    inp = ob.input
    ev: list[Evidence] = []
    vocab = inp.vocab or {}
    places = [("call", ob.call, 3, "in the call markup"), ("prompt", ob.prompt, 2, "in the tools prompt")]
    if kind == "reasoning":
        places = [
            (
                "call",
                ob.reasoning + ob.generation + ob.call,
                3,
                "in the rendered turn" if inp.templates else "in the output",
            ),
            ("prompt", ob.prompt, 2, "in the tools prompt"),
        ]
    places.append(("text", ob.text if inp.templates else "", 1, "in the template's text"))
    found_here: list[Evidence] = []
    alike: list[Evidence] = []
    explained: set[str] = set()
    for s in p.sentinels:
        value = s["value"]
        if s["how"] == "reference" or not _distinctive(value):
            continue
        if (kind == "tool") == (value in ob.reasoning_tokens):
            continue  # tool parsers are judged by their call markup, reasoning parsers by their think markup
        got = None
        for _, t, w, said in places:
            if not t:
                continue
            if s["how"] == "pattern":
                m = markup.find_pattern(value, t)
                if m:
                    got = Evidence(
                        "sentinel",
                        "for",
                        w,
                        f"{m} {said}, its pattern {value} ({_where(s)})",
                        token=value,
                        found=m,
                        file=s["file"],
                        line=s["line"],
                    )
                    explained.add(m)
                    break
            elif value in t:
                got = Evidence(
                    "sentinel",
                    "for",
                    w,
                    f"{value} {said} ({_where(s)})",
                    token=value,
                    file=s["file"],
                    line=s["line"],
                )
                break
        if got is None and vocab and value in vocab:
            got = Evidence(
                "sentinel",
                "for",
                2,
                f"{value} is a token of the tokenizer ({_where(s)})",
                token=value,
                file=s["file"],
                line=s["line"],
            )
        if got is not None:
            found_here.append(got)
            explained.add(value)
            continue
        if not markup.TOKEN.search(value):
            continue  # a look-alike of a word is no evidence: only of a token string
        for _, t, _, said in places:
            if not t:
                continue
            la = markup.look_alike(value, t, ob.folded(t))
            if la:
                alike.append(
                    Evidence(
                        "look-alike",
                        "for",
                        2,
                        f"{la.found} {said} reads like {value} ({_where(s)})",
                        token=value,
                        found=la.found,
                        code_points=_points(la),
                        file=s["file"],
                        line=s["line"],
                    )
                )
                explained.update((la.found, value))
                break
        else:
            alt = next((v for v in vocab if markup.look_alike(value, v)), None) if vocab else None
            if alt:
                la = markup.look_alike(value, alt)
                alike.append(
                    Evidence(
                        "look-alike",
                        "for",
                        2,
                        f"the tokenizer's {alt} reads like {value} ({_where(s)})",
                        token=value,
                        found=alt,
                        code_points=_points(la),
                        file=s["file"],
                        line=s["line"],
                    )
                )
                explained.update((alt, value))
    ev += _cap(found_here, 12) + _cap(alike, 8) + _unlike(alike)
    if kind == "tool":
        ev += _template_tokens(p, ob, explained)
        ev += _regex(p, ob)
        ev += _shape(p, ob)
        ev += _unknown_markup(p, ob, explained)
        ev += _missing(p, ob, explained)
        ev += _same_template(p, ob)
    ev += _vocabulary(p, inp)
    ev += _stripped(p, inp, found_here)
    return ev


def _points(la: markup.LookAlike) -> list[str]:
    return [f"{ours} where the parser has {theirs}" for theirs, ours in la.differences]


def _unlike(alike: list[Evidence]) -> list[Evidence]:
    """What stops the look-alikes as written: one entry per set of differing code points, with its tokens."""
    groups: dict[tuple[str, ...], list[Evidence]] = {}
    for e in alike:
        groups.setdefault(tuple(e.code_points), []).append(e)
    return [
        Evidence(
            "look-alike",
            "against",
            -1,
            f"as written {'it is' if len(es) == 1 else 'they are'} not "
            f"{' '.join(e.token for e in es)}: " + "; ".join(points),
            token=es[0].token,
            found=es[0].found,
            code_points=list(points),
            file=es[0].file,
            line=es[0].line,
        )
        for points, es in groups.items()
    ]


def _template_tokens(p: Profile, ob: Observation, explained: set[str]) -> list[Evidence]:
    """Tokens of the call markup that the parser's shipped template renders too (a parser whose tokens are
    defined outside the tree is known by its template)."""
    out = []
    for t in markup.tokens(ob.call):
        if t in p.template_tokens and t not in explained:
            path = next(path for path, r, _ in p.templates if t in r.call)
            out.append(
                Evidence(
                    "template",
                    "for",
                    2,
                    f"{t} in the call markup is rendered by its shipped template {path} too",
                    token=t,
                )
            )
            explained.add(t)
    return _cap(out, 4)


def _regex(p: Profile, ob: Observation) -> list[Evidence]:
    hit = _best_regex(p.regexes, ob.region())
    if not hit:
        return []
    r, share = hit
    name = r["attribute"] or f"re.{r['how']}(...)"
    if share >= 0.5:
        wide = [
            shape
            for shape, example in _SHAPE_EXAMPLES.items()
            if (_best_regex([r], example) or (r, 0))[1] >= 0.6
        ]
        if len({w.split("-")[0] for w in wide}) > 1:  # it matches calls of several shapes: a wide net
            return [
                Evidence(
                    "regex",
                    "for",
                    2,
                    f"its regular expression {name} ({r['file']}:{r['line']}) matches the "
                    f"call markup ({share:.0%} of it), as it matches calls of other shapes too",
                    file=r["file"],
                    line=r["line"],
                )
            ]
        return [
            Evidence(
                "regex",
                "for",
                4,
                f"its regular expression {name} ({r['file']}:{r['line']}) matches the "
                f"call markup ({share:.0%} of it)",
                file=r["file"],
                line=r["line"],
            )
        ]
    if share >= 0.2:
        return [
            Evidence(
                "regex",
                "for",
                1,
                f"its regular expression {name} ({r['file']}:{r['line']}) matches a "
                f"part of the call markup ({share:.0%})",
                file=r["file"],
                line=r["line"],
            )
        ]
    return []


def _shape(p: Profile, ob: Observation) -> list[Evidence]:
    text, where = (ob.call, "the call markup") if ob.call else (ob.prompt, "the tools prompt")
    got = markup.shapes(text)
    primary = [s for s in got if s in markup.PRIMARY]
    if not primary or not p.shapes:
        return []
    weight = 3 if ob.call else 2
    common = [s for s in primary if s in p.shapes]
    if not common:
        want = " or ".join(f"{markup.DESCRIBE[s]} (from {src})" for s, src in p.shapes.items())
        return [
            Evidence("shape", "against", -weight, f"{where} has {markup.describe(got)}; it expects {want}")
        ]
    s = common[0]
    said = markup.describe([s] + [q for q in got if q == "args-only"])
    out = [
        Evidence(
            "shape",
            "for",
            weight,
            f"{where} has {said}, as it expects (from {p.shapes[s]})" + _sample(s, text),
        )
    ]
    if s == "json" and p.details and ob.call:
        mine = {q for q in got if q not in markup.PRIMARY}
        for group in (("tagged", "bare", "name-token", "fenced"), ("list",)):
            a = mine & set(group)
            b = p.details & set(group)
            if a & b:
                out.append(
                    Evidence(
                        "shape", "for", 1, f"{markup.DESCRIBE[sorted(a & b)[0]]}, as its shipped template"
                    )
                )
            elif a != b:  # one has it, the other has another or none
                out.append(
                    Evidence(
                        "shape",
                        "against",
                        -1,
                        f"the JSON is {_said(a) or 'not ' + _said(b)}; its"
                        f" shipped template's is {_said(b) or 'not ' + _said(a)}",
                    )
                )
        ka = {q[5:] for q in mine if q.startswith("args:")}
        kb = {q[5:] for q in p.details if q.startswith("args:")}
        if ka and kb:
            if ka & kb:
                out.append(
                    Evidence(
                        "shape",
                        "for",
                        1,
                        f'the arguments under "{sorted(ka & kb)[0]}", as its shipped template',
                    )
                )
            else:
                out.append(
                    Evidence(
                        "shape",
                        "against",
                        -1,
                        f'the arguments under "{sorted(ka)[0]}"; its shipped template has "{sorted(kb)[0]}"',
                    )
                )
    return _cap(out, 5)


def _said(qs: set[str]) -> str:
    return ", ".join(markup.DESCRIBE[q] for q in sorted(qs))


def _sample(shape: str, text: str) -> str:
    hint = {"xml-function": "<function=", "xml-invoke": "invoke name=", "arg-key": "<arg_key>"}.get(shape)
    return f" ({hint}...)" if hint and hint in text else ""


def _unknown_markup(p: Profile, ob: Observation, explained: set[str]) -> list[Evidence]:
    """Tokens of the call markup the parser neither looks for nor renders. A parser holding tokens defined
    outside vLLM's tree (references) may be looking for them: a note, not evidence against."""
    if not ob.call or not (p.sentinels or p.template_tokens):
        return []
    refs = [s["value"] for s in p.sentinels if s["how"] == "reference"]
    turn = set(markup.tokens(ob.reply)) | set(markup.tokens(ob.generation))
    known = {s["value"] for s in p.sentinels} | p.template_tokens | explained
    unknown = [
        t
        for t in markup.tokens(ob.call)
        if t not in known
        and t not in turn
        and t not in ob.reasoning_tokens
        and not any(t in k or k in t for k in known if len(k) > 2)
    ]
    out = []
    for t in unknown:
        others = ob.owners.get(t, [])
        if refs and not others:
            out.append(
                Evidence(
                    "markup",
                    "note",
                    0,
                    f"{t} in the call markup may be one of its tokens defined outside"
                    f" vLLM's tree ({', '.join(refs[:3])})",
                    token=t,
                )
            )
        else:
            whose = f" ({', '.join(others[:3])} look for it)" if others else ""
            out.append(
                Evidence(
                    "markup", "against", -1, f"{t} in the call markup is none of its tokens{whose}", token=t
                )
            )
    return _cap(out, 4)


def _missing(p: Profile, ob: Observation, explained: set[str]) -> list[Evidence]:
    """Its token strings that the call markup (and everything else the input shows) lacks, when there is call
    markup to look at; its think markup (the reasoning parsers' tokens) is not asked for."""
    if not ob.call:
        return []
    seen = ob.everywhere()
    out = [
        Evidence(
            "missing",
            "against",
            -1,
            f"{s['value']} is not in the call markup ({_where(s)})",
            token=s["value"],
            file=s["file"],
            line=s["line"],
        )
        for s in p.sentinels
        if s["how"] in ("attribute", "literal", "regex")
        and markup.TOKEN.search(s["value"])
        and s["value"] not in seen
        and s["value"] not in explained
        and s["value"] not in ob.reasoning_tokens
    ]
    return _cap(out, 2)


def _same_template(p: Profile, ob: Observation) -> list[Evidence]:
    if not ob.input.templates or not ob.call:
        return []
    for path, r, blob_id in p.templates:
        if blob_id == ob.blob_id:
            return [
                Evidence(
                    "template", "for", 3, f"renders the call markup exactly as its shipped template {path}"
                ),
                Evidence("template", "for", 2, f"the file is its shipped template {path}"),
            ]
        if r.call and r.call.strip() == ob.call.strip():
            return [
                Evidence(
                    "template", "for", 3, f"renders the call markup exactly as its shipped template {path}"
                )
            ]
    return []


def _vocabulary(p: Profile, inp: Input) -> list[Evidence]:
    if inp.vocab is None and inp.plain_vocab is None:
        return []
    vocab = set(inp.vocab or {}) | (inp.plain_vocab or set())
    wanted = [s for s in p.sentinels if s["how"] in ("attribute", "literal") and _whole_token(s["value"])]
    held = [s for s in wanted if s["value"] in vocab]
    if not held:
        return []  # none of its tokens: another family; the missing ones are not evidence of anything
    out = [
        Evidence(
            "vocabulary",
            "against",
            -1,
            f"{s['value']} is not a token of the tokenizer; it looks for it"
            f" ({_where(s)}): a parser that looks its start token up by id fails, one that searches the text"
            " never finds it as one token",
            token=s["value"],
            file=s["file"],
            line=s["line"],
        )
        for s in wanted
        if s["value"] not in vocab
    ]
    return _cap(out, 3)


def _stripped(p: Profile, inp: Input, found: list[Evidence]) -> list[Evidence]:
    special = {t for t, sp in (inp.vocab or {}).items() if sp}
    needed = [e for e in found if e.token in special]
    if not needed:
        return []
    if p.keeps_special:
        k = p.keeps_special[0]
        when = f" when {k['guard']}" if k["guard"] else ""
        return [
            Evidence(
                "stripped",
                "note",
                0,
                f"{needed[0].token} is a special token; its adjust_request sets "
                f"skip_special_tokens = False{when} ({k['class']}, {k['file']}:{k['line']}), so it reaches"
                " the parser",
                token=needed[0].token,
                file=k["file"],
                line=k["line"],
            )
        ]
    out = [
        Evidence(
            "stripped",
            "against",
            -1,
            f"{e.token} is a special token of this tokenizer and its "
            "adjust_request never sets skip_special_tokens = False: vLLM strips it from the text before the"
            " parser sees it (unless each request passes skip_special_tokens: false)",
            token=e.token,
            file=e.file,
            line=e.line,
        )
        for e in needed
    ]
    return _cap(out, 2)


def rank(ps: list[Profile], ob: Observation, kind: str) -> list[Candidate]:
    scored = []
    for p in ps:
        ev = score(p, ob, kind)
        total = sum(e.weight for e in ev)
        exact = sum(1 for e in ev if e.kind == "sentinel")
        listed = len([s for s in p.sentinels if _distinctive(s["value"])]) or 1
        scored.append((total, exact, exact / listed, p, ev))
    scored.sort(key=lambda x: (-x[0], -x[1], -x[2], x[3].name))
    out, last, place = [], None, 0
    for i, (total, _exact, _, p, ev) in enumerate(scored, 1):
        if total != last:  # equal scores share a rank; the next rank counts those before it (1, 1, 3)
            place = i
            last = total
        c = p.card
        ev.sort(key=lambda e: ({"for": 0, "note": 1, "against": 2}[e.stance], -abs(e.weight)))
        out.append(
            Candidate(
                kind=kind,
                name=p.name,
                rank=place,
                score=total,
                impl=c.impl,
                real_class=c.real.class_,
                real_file=c.real.file,
                aliases=list(c.aliases),
                expects=p.expects(),
                chat_templates=[m["file"] for m in c.chat_templates],
                evidence=ev,
            )
        )
    return out


# -- the answer -------------------------------------------------------------------------------------------


def fit(
    db,
    text: str,
    at: str | None = None,
    kind: str | None = None,
    name: str = "FILE",
    replay: Callable | None = None,
    templates_too: bool = True,
    prove: Callable | None = None,
    template_path: str | None = "FILE",
) -> Fit:
    """Rank the parsers of a version by the evidence a file's text gives (see the module). `replay(name, version,
    text)` -> a `Replay` answer (Index.replay): given, the top tool candidates are run on a raw output.
    `prove(tool, version, text, reasoning)` -> a `Replay` answer: given, the pair is proven on the model's
    outputs (answers/pairing.py). `template_path`: how the serve line names the given template in --chat-template
    (default `name`; None: not named, as the browser's pasted text has no path)."""
    version = require(db, at) if at else newest(db)
    inp = read_input(text)  # whole: its size is fitrun.sized's, where every surface asks (Index.fit)
    if replay and inp.kind != "output":
        raise AnswerError(
            f"--replay runs parsers on a raw model output; {name} is read as a {inp.kind.replace('_', ' ')}"
            f" ({inp.why})",
            "give fit a raw output (text captured with skip_special_tokens: false)"
            " with --replay, or leave --replay out",
        )
    ob = observe(inp)
    profs = profiles(db, version, ["tool", "reasoning"], templates_too)
    ob.reasoning_tokens = think_tokens(profs)
    for p in profs["tool"]:
        for value in {s["value"] for s in p.sentinels}:
            ob.owners.setdefault(value, []).append(p.name)
    ranked = {k: rank(profs[k], ob, k) for k in ([kind] if kind else ["tool", "reasoning"])}
    tool = ranked.get("tool", [])
    reasoning = ranked.get("reasoning", [])
    runs = None
    if replay and kind != "reasoning":
        runs = [
            _replayed(replay(c.name, version, inp.output), c.name, version, ob)
            for c in [c for c in tool if c.score > 0][:REPLAYED]
        ]
        tool = _fold(tool, runs)
    from . import docpairs, pairing

    documented = docpairs.resolve(db, version, inp.model) if inp.model else None
    if documented:
        pairing.docs_for_model(tool, documented.tool, documented, "tool")
        tool = pairing.rerank(tool)
    best = tool[0] if tool and tool[0].score > 0 else None
    fits = bool(best and best.score >= FIT_SCORE and not _blocked(best))
    # the reasoning parsers the input shows think markup for (their sentinels found in it)
    thinking = [c for c in reasoning if any(e.kind == "sentinel" and e.stance == "for" for e in c.evidence)]
    if best and thinking:
        pairing.docs_for_tool(thinking, docpairs.for_tool(db, version, best.name), best.name)
        if documented:
            pairing.docs_for_model(thinking, documented.reasoning, documented, "reasoning")
        pairing.code_for_tool(db, thinking, _card(profs, "tool", best.name))
        reasoning = pairing.rerank(reasoning)
        thinking = [c for c in reasoning if c in thinking]
    think = thinking[0] if thinking and thinking[0].score >= 3 else None
    if think is None and kind == "reasoning" and reasoning and reasoning[0].score >= 3:
        think = reasoning[0] if any(e.kind == "sentinel" for e in reasoning[0].evidence) else None
    proof = None
    if fits and kind != "reasoning":
        outputs = _outputs(ob)
        if prove is None:
            proof = None
        elif not outputs:
            proof = Proof(version, None, best.name, think.name if think else None, [], [], _no_outputs(inp))
        else:
            tools_try = _best_two(tool, lambda c: c.score > 0 and not _blocked(c))
            think_try = _best_two(thinking, lambda c: c.score >= 3) if think else None
            tried = pairing.prove(prove, version, tools_try, think_try, outputs)
            pairing.weigh(tried, tool, reasoning)
            tool, reasoning = pairing.rerank(tool), pairing.rerank(reasoning)
            thinking = [c for c in reasoning if c in thinking]
            passed = next((r for r in tried if r.ok), None)
            if passed:
                best = next(c for c in tool if c.name == passed.tool)
                think = next((c for c in reasoning if c.name == passed.reasoning), None)
            chosen = passed or next((r for r in tried if r.tool == best.name), tried[0])
            proof = Proof(
                version,
                (passed is not None) if any(r.status == "ok" for r in tried) else None,
                chosen.tool,
                chosen.reasoning,
                chosen.outputs,
                tried,
                None if any(r.status == "ok" for r in tried) else f"the replay {tried[0].failure()}",
            )
    winner_profile = next((p for p in profs.get("tool", []) if best and p.name == best.name), None)
    tdiff = _template_diff(winner_profile, ob) if winner_profile else None
    shipped = tdiff.template if tdiff else (best.chat_templates[0] if best and best.chat_templates else None)
    serve, pair = None, None
    if fits:
        chat = _chat_template(inp, tdiff, name if template_path == "FILE" else template_path)
        if chat is None:
            chat = docpairs.documented_template(db, version, best.name)
        if documented and documented.chat_template and best.name in documented.tool:
            chat = chat if inp.kind == "template" else documented.chat_template
        from .serveline import command

        serve = command(best.name, think.name if think else None, chat, inp.model)
        pair = _pair(tool, thinking, best, think, chat)
    verdict = _verdict(
        kind,
        tool,
        reasoning,
        best,
        fits,
        think,
        shipped,
        _alike(profs["tool"], tool, ob) if not fits and not _any_for(tool) else None,
    )
    verdict += _pair_said(pair, proof, documented, ob)
    shown = [c for c in tool if c.score > 0] or [
        c for c in tool if any(e.stance == "for" for e in c.evidence)
    ][:3]
    shown_r = [c for c in reasoning if c.score > 0] or ([] if kind != "reasoning" else reasoning[:3])
    observed = _observed(ob)
    return Fit(
        version=version,
        file=name,
        kind=kind,
        observed=observed,
        tool=shown,
        reasoning=shown_r,
        fits=fits,
        template=shipped,
        template_diff=tdiff,
        serve=serve,
        verdict=verdict,
        replay=runs,
        model=inp.model,
        documented=documented,
        pair=pair,
        proof=proof,
    )


def fit_model(
    db,
    model: str,
    at: str | None = None,
    kind: str | None = None,
    prove: Callable | None = None,
) -> Fit:
    """`fit --model NAME`: the pair for a model named by its Hugging Face id or its family (any case), from the
    version's documentation (answers/docpairs.py `resolve`), else the parser names of the version that match it
    (answers/search.py, the search box's levels), with the code's pairing for a tool parser the docs give no
    reasoning parser for; proven on the outputs of the chat template the docs give it, else of its tool parser's
    shipped template with a think block of its reasoning parser's tokens (answers/pairing.py)."""
    from . import docpairs, pairing
    from .card import cards

    version = require(db, at) if at else newest(db)
    model = model.strip()
    if not model:
        raise AnswerError("--model is empty", "give a Hugging Face id (Qwen/Qwen3-8B) or a family (Qwen3)")
    documented = docpairs.resolve(db, version, model)
    notes: list[str] = []
    got = docpairs.pages(db, version)
    if got is None or (got.reasoning_path is None and docpairs.registered(db, version)["reasoning"]):
        notes.append(
            f"the {'documentation' if got is None else 'reasoning page'} of {version} is not stored in this"
            " database (built before tpindex read it): build the version again into a new --db to read it"
        )
    by_kind: dict[str, list[Candidate]] = {"tool": [], "reasoning": []}

    def candidate(k: str, name: str, evidence: list[Evidence]) -> None:
        if any(c.name == name for c in by_kind[k]):
            return
        (card,) = cards(db, name, version, k)
        c = _candidate(card, k, evidence)
        by_kind[k].append(c)

    for k in ("tool", "reasoning"):
        for n in (
            documented.tool if (documented and k == "tool") else documented.reasoning if documented else []
        ):
            candidate(k, n, [])
        pairing.docs_for_model(
            by_kind[k], [c.name for c in by_kind[k]], documented, k
        ) if documented else None
    for k in ("tool", "reasoning"):
        if not by_kind[k] and not (k == "reasoning" and documented and documented.family):
            for hit in _named(db, model, k, version):
                candidate(
                    k,
                    hit.name,
                    [
                        Evidence(
                            "name",
                            "for",
                            3,
                            f"registered under a name matching {model!r} ({hit.level} {hit.via}"
                            + (f" {hit.key}" if hit.via != "name" else "")
                            + ")",
                        )
                    ],
                )
    tool = pairing.rerank([c for c in by_kind["tool"] if c.score > 0])
    best = tool[0] if tool else None
    if best and not by_kind["reasoning"]:
        code_cands = _code_reasoning(db, version, best.name)
        for n in code_cands:
            candidate("reasoning", n, [])
        pairing.code_for_tool(db, by_kind["reasoning"], cards(db, best.name, version, "tool")[0])
    reasoning = pairing.rerank([c for c in by_kind["reasoning"] if c.score > 0])
    if not tool and not reasoning:
        raise AnswerError(
            f"nothing in {version}'s documentation or parser names matches the model {model!r}",
            "give a Hugging Face id (Qwen/Qwen3-8B) or a family the documentation names (tpindex fit --model"
            " Qwen3); or give fit the model's chat template or tokenizer_config.json",
        )
    think = reasoning[0] if reasoning else None
    proof = None
    chat = documented.chat_template if documented and best and best.name in documented.tool else None
    if prove is not None and best and kind != "reasoning":
        outputs, made = _model_outputs(db, version, best, think, documented, chat)
        if not outputs:
            proof = Proof(version, None, best.name, think.name if think else None, [], [], made)
        else:
            notes.append(made)
            composed = "think block" in made  # not the model's own output: a failure proves nothing
            tried = pairing.prove(prove, version, tool[:3], reasoning[:3] if think else None, outputs)
            if composed and not any(r.ok for r in tried):
                proof = Proof(
                    version,
                    None,
                    tried[0].tool,
                    tried[0].reasoning,
                    tried[0].outputs,
                    tried,
                    f"the output composed from its parsers' tokens does not pass ({tried[0].failure()}); the"
                    " model's own format may differ: give fit the model's chat template or tokenizer_config.json",
                )
                tried = []
        if outputs and tried:
            pairing.weigh(tried, tool, reasoning)
            tool, reasoning = pairing.rerank(tool), pairing.rerank(reasoning)
            passed = next((r for r in tried if r.ok), None)
            if passed:
                best = next(c for c in tool if c.name == passed.tool)
                think = next((c for c in reasoning if c.name == passed.reasoning), None)
            chosen = passed or tried[0]
            ran = any(r.status == "ok" for r in tried)
            proof = Proof(
                version,
                (passed is not None) if ran else None,
                chosen.tool,
                chosen.reasoning,
                chosen.outputs,
                tried,
                None if ran else f"the replay {tried[0].failure()}",
            )
    from .serveline import command

    line_model = model if docpairs.is_model_id(model) else None
    serve = command(best.name if best else None, think.name if think else None, chat, line_model)
    pair = _pair(tool, reasoning, best, think, chat) if best else Pair(None, think.name, [], {}, None)
    if documented:
        said = f"{model} is {documented.family} in {version}'s documentation ({documented.match})"
        if documented.tool_calling is False:
            said += "; its reasoning table marks tool calling with that reasoning parser as not supported"
        if len(documented.templates_named) > 1:
            said += "; the docs give several chat templates: " + ", ".join(documented.templates_named)
        if documented.unregistered:
            said += f"; the docs name {', '.join(documented.unregistered)}, not registered at {version}"
    else:
        said = f"{version}'s documentation names no family {model!r} belongs to: read from the parser names"
    if best is None:
        said += "; no tool parser is documented or named for it"
    verdict = said + _pair_said(pair if best else None, proof, documented, Observation(Input("model", "")))
    observed = Observed(
        input="model",
        why=f"a model name, read against {version}'s documentation and parser names",
        call=None,
        shapes=[],
        tokens=[],
        prompt_tokens=[],
        vocabulary=None,
        special=[],
        notes=notes,
    )
    return Fit(
        version=version,
        file=model,
        kind=kind,
        observed=observed,
        tool=tool if kind != "reasoning" else [],
        reasoning=reasoning if kind != "tool" else [],
        fits=best is not None,
        template=chat,
        template_diff=None,
        serve=serve,
        verdict=verdict,
        model=model,
        documented=documented,
        pair=pair,
        proof=proof,
    )


def _candidate(card, kind: str, evidence: list[Evidence]) -> Candidate:
    return Candidate(
        kind=kind,
        name=card.name,
        rank=1,
        score=sum(e.weight for e in evidence),
        impl=card.impl,
        real_class=card.real.class_,
        real_file=card.real.file,
        aliases=list(card.aliases),
        expects="",
        chat_templates=[m["file"] for m in card.chat_templates],
        evidence=list(evidence),
    )


def _named(db, model: str, kind: str, version: str) -> list:
    """The parser names of a kind registered at the version that a model's name matches at the best level of the
    search box (answers/search.py), its family level included; prose hits left out (the docs were read)."""
    from .search import find_names

    query = model.rsplit("/", 1)[-1]
    registered = {
        r[0]
        for r in db.execute("select name from parser_map_v where version = ? and kind = ?", [version, kind])
    }
    hits = [
        h
        for h in find_names(db, query)
        if h.kind == kind and h.name in registered and h.via not in ("docs", "docstring")
    ]
    levels = [h.level for h in hits]
    return [h for h in hits if h.level == levels[0]] if hits and levels[0] != "contains" else []


def _code_reasoning(db, version: str, tool: str) -> list[str]:
    from .card import cards
    from .serveline import code_pairing

    name, _by, others, _ = code_pairing(db, cards(db, tool, version, "tool")[0])
    return ([name] if name else []) + others


def _model_outputs(db, version, best, think, documented, chat) -> tuple[list, str]:
    """(outputs, what they were made from) for a model named: the turns of the documentation's chat template for
    it, else of the templates vLLM ships for its tool parser (those that render reasoning when a reasoning
    parser is paired and thinking is not off by default), else such a template's call markup after a think block
    of the reasoning parser's start and end tokens. Thinking off by default (the table's notes): the outputs
    without reasoning; on: those with it."""
    from ..store import code
    from .proof import Output, outputs_of

    thinking = documented.thinking if documented else None
    wants_reasoning = think is not None and thinking != "off"

    def fitting(turns: list[dict]) -> list[dict]:
        if thinking == "off" or think is None:  # the call alone (after the prompt it follows: turns())
            return [t for t in turns if t["what"] == markup.WITH_CALL]
        if thinking == "on":
            return [t for t in turns if t["what"] != markup.WITH_CALL]
        return turns

    calls: list[tuple[str, str]] = []  # (path, call markup) of the shipped templates rendering a call
    for path, why in [(chat, "the template the documentation gives")] * bool(chat) + [
        (t, f"a template vLLM ships for {best.name}") for t in best.chat_templates
    ]:
        blob = code.blob_at(db, version, path)
        text = code.read_text(db, blob) if blob else None
        if not text:
            continue
        rendered = markup.render(text)
        turns = fitting(rendered.turns)
        if turns and (not wants_reasoning or any(t["what"] != markup.WITH_CALL for t in turns)):
            return outputs_of(turns), f"proven on the outputs of {path}, {why}"
        if rendered.call:
            calls.append((path, rendered.call.strip()))
    if not calls:
        return [], (
            f"no chat template to render what the model emits ({best.name} ships none that renders a call): give"
            " fit the model's chat template or tokenizer_config.json to prove the pair"
        )
    path, call = calls[0]
    start, end = _think_tokens(db, version, think.name) if wants_reasoning else (None, None)
    if end is None:
        return [Output(markup.WITH_CALL, "", call, True)], f"proven on the call markup of {path}"
    text = (f"{start}" if start else "") + f"{markup.THOUGHT}{end}{call}"
    return [Output(markup.WITH_REASONING, "", text, True)], (
        f"proven on the call markup of {path} after a think block of {think.name}'s tokens"
        f" ({start or ''} ... {end}): the model's own template was not given"
    )


def _think_tokens(db, version: str, name: str) -> tuple[str | None, str | None]:
    """A reasoning parser's start and end tokens: its sentinels held by attributes naming a start (start, begin)
    or an end of thinking (answers/serveline.py's rule)."""
    from .card import name_sentinels
    from .serveline import _ends

    start = end = None
    for s in name_sentinels(db, name, version, "reasoning"):
        attrs = [a.strip("_").lower() for a in s["attributes"]]
        value = _unescaped(s["value"])
        if end is None and any(_ends(a) for a in attrs):
            end = value
        elif start is None and any(("start" in a or "begin" in a) for a in attrs):
            start = value
    if start and not start.endswith("\n"):
        start += "\n"
    if end and not end.startswith("\n"):
        end = "\n" + end
    if end and not end.endswith("\n"):
        end += "\n\n"
    return start, end


def _unescaped(value: str) -> str:
    """A sentinel as the text holds it: a raw string's escapes (r"<think>\\n", written for a regular expression)
    read as the characters they stand for."""
    return re.sub(r"\\([ntr])", lambda m: {"n": "\n", "t": "\t", "r": "\r"}[m.group(1)], value)


def _card(profs: dict, kind: str, name: str):
    return next(p.card for p in profs.get(kind, []) if p.name == name)


def _best_two(cands: list[Candidate], ok) -> list[Candidate]:
    """The candidates of the best two ranks that `ok` admits (what the proof tries), at most three."""
    admitted = [c for c in cands if ok(c)]
    ranks = sorted({c.rank for c in admitted})[:2]
    return [c for c in admitted if c.rank in ranks][:3]


def _outputs(ob: Observation) -> list:
    """What the model emits, to prove a pair on: its template's turns, or the raw output given."""
    from .proof import Output, outputs_of

    if ob.input.kind == "output":
        return [Output("the raw output", "", ob.input.output or "", False)]
    return outputs_of(ob.rendered.turns) if ob.rendered is not None else []


def _no_outputs(inp: Input) -> str:
    if inp.kind == "tokenizer":
        return (
            "a tokenizer.json has no chat template to render what the model emits: give fit its chat template"
        )
    return "its chat template renders no assistant turn with a tool call to replay"


def _pair(tool, thinking, best, think, chat) -> Pair:
    from .pairing import decisive, tie_of

    evidence = decisive(best) + (decisive(think) if think else [])
    tie = {}
    if tie_of(tool, best):
        tie["tool"] = tie_of(tool, best)
    if think and tie_of(thinking, think):
        tie["reasoning"] = tie_of(thinking, think)
    return Pair(best.name, think.name if think else None, evidence, tie, chat)


def _pair_said(pair: Pair | None, proof: Proof | None, documented, ob: Observation) -> str:
    """The pair's part of the verdict: a tie, the proof, the documentation's notes on thinking."""
    out = ""
    if pair:
        for k, names in pair.tie.items():
            out += (
                f"; {k}: a tie no evidence breaks between {', '.join(names)}"
                f" (the line names {names[0]}, the first by name)"
            )
    if ob.generation and any(t in ob.generation for t in ob.reasoning_tokens):
        out += "; its generation prompt opens a think block (the output starts inside the reasoning)"
        said = "its generation prompt opens a think block: the model's output starts inside the reasoning"
        if said not in ob.notes:
            ob.notes.append(said)
    if proof is not None:
        failed = [r for r in proof.tried if not r.ok and r.status == "ok"]
        if proof.ok:
            out += f"; proven at {proof.version}: " + (
                f"--tool-call-parser {proof.tool}"
                + (f" --reasoning-parser {proof.reasoning}" if proof.reasoning else "")
                + f" returns the call intact on {len(proof.outputs)} output(s) of the model, in every mode"
            )
        elif proof.ok is False:
            out += f"; the proof fails at {proof.version}: no pair tried passes"
        elif proof.skipped:
            out += f"; not proven: {proof.skipped}"
        for r in failed[:3]:
            who = f"{r.tool}" + (f" + {r.reasoning}" if r.reasoning else "")
            out += f"; {who} fails {r.failure()}"
    if documented:
        for n in documented.notes[:3]:
            out += f"; the docs: {n.text} ({n.file}:{n.line})"
    return out


def _replayed(answer, name: str, version: str, ob: Observation) -> ReplayRun:
    """What one candidate's own code made of the output (the one version of a Replay answer)."""
    (v,) = answer.versions
    modes = {m.mode: m for m in v.modes}

    def calls(m):
        return [
            f"{c.name}({json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)})"
            if not isinstance(c.arguments, str)
            else f"{c.name}({c.arguments})"
            for c in m.calls
        ]

    non, stream = modes.get("nonstream"), modes.get("stream:token")
    markup_tokens = [t for t in markup.tokens(ob.call) if t not in ob.reasoning_tokens]
    contents = [m.content or "" for m in (non, stream) if m]
    leaked = [t for t in dict.fromkeys(markup_tokens) if any(t in c for c in contents)]
    return ReplayRun(
        name=name,
        version=version,
        status=v.status,
        error=v.error or ("; ".join(non.errors[:2]) if non and non.errors else None),
        calls=calls(non) if non else [],
        streamed=calls(stream) if stream else None,
        content=non.content if non else None,
        leaked=leaked,
        outcomes={m.mode: m.outcome for m in v.modes},
    )


def _fold(cands: list[Candidate], runs: list[ReplayRun]) -> list[Candidate]:
    """The replay's results as evidence, then the candidates ranked again (the order before breaks ties)."""
    by_name = {c.name: c for c in cands}
    for r in runs:
        c = by_name[r.name]
        where = f"vLLM's own code at {r.version}"
        if r.status != "ok" or (r.error and not r.calls):
            c.evidence.append(
                Evidence(
                    "replay",
                    "note",
                    0,
                    f"{where} could not run it on the output ({r.status}: {r.error or 'no result'})",
                )
            )
        elif r.calls:
            c.evidence.insert(
                0,
                Evidence(
                    "replay",
                    "for",
                    REPLAY_WEIGHT,
                    f"{where} makes {', '.join(r.calls)} of the output (non-streaming)",
                ),
            )
        else:
            c.evidence.append(
                Evidence(
                    "replay",
                    "against",
                    -REPLAY_WEIGHT,
                    f"{where} makes no tool call of the output (non-streaming)",
                )
            )
        if r.leaked and r.calls:  # (no call: the whole output is content, said above)
            c.evidence.append(
                Evidence(
                    "leak", "against", -1, f"{where} leaves call markup in the content: {' '.join(r.leaked)}"
                )
            )
        names = [x.split("(", 1)[0] for x in r.calls]
        if r.status == "ok" and r.streamed is not None and [x.split("(", 1)[0] for x in r.streamed] != names:
            c.evidence.append(
                Evidence(
                    "stream",
                    "against",
                    -1,
                    f"{where} streamed one token per delta calls "
                    f"{', '.join(r.streamed) or 'nothing'} instead",
                )
            )
        c.score = sum(e.weight for e in c.evidence)
    return _rerank(cands)


def _rerank(cands: list[Candidate]) -> list[Candidate]:
    from .pairing import rerank

    return rerank(cands)


def think_tokens(profs: dict[str, list[Profile]]) -> set[str]:
    """The think markup of a version: token strings held by more reasoning-only source files (a sentinel's file
    that is no tool parser's real file) than tool-only ones (no reasoning parser's real file). A unified class
    (both kinds' real file) holds both kinds' tokens and votes for neither; a tool parser that strips `</think>`
    does not make it call markup, nor a reasoning parser that stops at `<tool_call>` make that think markup."""
    real = {k: {p.card.real.file for p in profs.get(k, [])} for k in ("tool", "reasoning")}
    files: dict[str, dict[str, set[str]]] = {}
    for k, other in (("reasoning", "tool"), ("tool", "reasoning")):
        for p in profs.get(k, []):
            for s in p.sentinels:
                if s["file"] not in real[other]:
                    files.setdefault(s["value"], {"reasoning": set(), "tool": set()})[k].add(s["file"])
    return {v for v, by in files.items() if len(by["reasoning"]) > len(by["tool"])}


def _any_for(cands: list[Candidate]) -> bool:
    return any(e.stance == "for" for c in cands for e in c.evidence)


def _blocked(c: Candidate) -> list[Evidence]:
    exact = any(e.kind == "sentinel" for e in c.evidence)
    out = [e for e in c.evidence if e.stance == "against" and e.kind in ("stripped", "vocabulary", "replay")]
    if not exact:
        out += [e for e in c.evidence if e.stance == "against" and e.kind == "look-alike"]
    return out


def _chat_template(inp: Input, tdiff: TemplateDiff | None, path: str | None) -> str | None:
    """The user's own template given to fit (a template file, named by its path; the shipped file itself by the
    shipped path); a tokenizer_config's template is the model's own, used without the flag."""
    if inp.kind == "template":
        return tdiff.template if tdiff and tdiff.same_file else path
    return None


def _template_diff(p: Profile, ob: Observation) -> TemplateDiff | None:
    if not p.templates:
        return None
    if not ob.input.templates or not ob.call:
        return None
    best = max(p.templates, key=lambda t: (t[2] == ob.blob_id, markup.similarity(t[1].call, ob.call)))
    path, r, blob_id = best
    pieces = markup.char_diff(r.call, ob.call)
    return TemplateDiff(
        template=path,
        identical=r.call.strip() == ob.call.strip(),
        same_file=blob_id == ob.blob_id,
        similarity=round(markup.similarity(r.call, ob.call), 3),
        shipped_call=r.call,
        given_call=ob.call,
        inline=markup.inline(pieces),
        pieces=[Piece(op, t) for op, t in pieces],
    )


def _verdict(kind, tool, reasoning, best, fits, think, shipped, alike=None) -> str:
    if kind == "reasoning":
        if think:
            return f"{think.name} fits: {_reasons(think)}"
        return "no reasoning parser fits: " + _closest(reasoning)
    if fits:
        out = f"{best.name} fits: {_reasons(best)}"
        if shipped:
            out += f"; vLLM ships {shipped} for it"
        return out
    if best and _blocked(best):
        stops = "; ".join(e.text for e in _blocked(best)[:2])
        out = f"nothing fits as written: the closest is {best.name} ({_reasons(best)}), but {stops}"
        return out + (f"; vLLM ships {shipped} for it" if shipped else "")
    return "nothing fits: " + _closest(tool, alike)


def _reasons(c: Candidate, most: int = 2) -> str:
    """Its strongest evidence for, in a few words each (where in the code left to the evidence list)."""
    pros = sorted((e for e in c.evidence if e.stance == "for"), key=lambda e: -e.weight)[:most]
    return (
        "; ".join(re.sub(r" \([^()]*(?:\([^()]*\)[^()]*)*\)$", "", e.text) for e in pros)
        or "no evidence against it"
    )


def _closest(cands: list[Candidate], alike: list[tuple[float, Candidate, str]] | None = None) -> str:
    """The closest candidates and what they expect: those with evidence for them, else those whose shipped
    template's call markup is most like the input's."""
    if not cands:
        return "the version has no parser of that kind"
    near = [c for c in cands if any(e.stance == "for" for e in c.evidence)][:3]
    if near:
        return "the closest are " + "; ".join(f"{c.name}, which expects {c.expects}" for c in near)
    if alike:
        return (
            "no parser of the version finds any of its token strings or call shapes in it; the shipped templates"
            " whose call markup is most like it are "
            + "; ".join(
                f"{path} ({share:.0%} alike: {markup.one_line(_call_of(c, path))[:80]}) for {c.name}, which expects"
                f" {c.expects}"
                for share, c, path in alike[:3]
            )
        )
    return "no parser of the version finds any of its token strings or call shapes in it"


def _call_of(c: Candidate, path: str) -> str:
    return c._calls.get(path, "")


def _alike(
    profiles: list[Profile], cands: list[Candidate], ob: Observation
) -> list[tuple[float, Candidate, str]]:
    """(similarity, candidate, template) of the shipped templates' call markup to the input's, best first."""
    if not ob.call.strip():
        return []
    by_name = {c.name: c for c in cands}
    out = []
    for p in profiles:
        for path, r, _ in p.templates:
            if r.call and p.name in by_name:
                by_name[p.name]._calls[path] = r.call
                out.append((markup.similarity(r.call.strip(), ob.call.strip()), by_name[p.name], path))
    out.sort(key=lambda x: (-x[0], x[1].name, x[2]))
    return out


def _observed(ob: Observation) -> Observed:
    inp = ob.input
    text = ob.call if ob.call else ob.prompt
    turn = set(markup.tokens(ob.reply))
    return Observed(
        input=inp.kind,
        why=inp.why,
        call=ob.call or None,
        shapes=markup.shapes(text) if text else [],
        tokens=[t for t in markup.tokens(ob.call) if t not in turn]
        if inp.templates
        else markup.tokens(ob.call),
        prompt_tokens=markup.tokens(ob.prompt),
        vocabulary=len(inp.vocab) if inp.vocab is not None else None,
        special=sorted(t for t, s in (inp.vocab or {}).items() if s)[:50],
        notes=ob.notes,
    )
