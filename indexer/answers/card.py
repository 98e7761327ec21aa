"""`card`: everything an operator needs about one parser name at one version, gathered from the index.

One `Card` per (version, kind, name), built by `cards()` for the CLI (`tpindex card`) and the browser
(`/-/parser/<kind>/<name>`), rendered as text, JSON or Markdown. What it holds and where it comes from:

- the name, its aliases (other names registered to the same class), impl and how it is registered;
- the registered, real, engine and wrapper classes with file and line, an overriding `__init__` whose bindings
  the real class's parsing methods read (`rebinds`, the `init` hops), and every file holding the name's code
  with its roles (parser_map, parser_hops, parser_code; README "Where the parsing code is");
- streaming as resolved through the class hierarchy, the contract methods with the class that defines
  each, the behaviour attributes with the class that sets them, as class creation leaves them in vLLM's
  default configuration, with what set them and the condition that changes them (parser_methods,
  parser_attrs; indexer/creation.py);
- what `adjust_request` does where readable: the definition that runs (the registered class's, followed
  into the engine class when it hands the call to `self._parser_engine.adjust_request`), whether it calls
  `super()`, and its `request.FIELD = VALUE` assignments with their conditions (request_settings);
- the sentinels of the name's own code: literals in its non-framework code files (the files of its
  registered, real, engine, wrapper and composed classes, and of the non-framework classes defining its
  contract methods) that sit in one of those classes, in a class of those files no other name has (a helper
  the parser uses), or at module level (module constants); a sentinel held by a class attribute or property
  that a more derived class of the name overrides, or bound in an `__init__` that a more derived class's
  `__init__` binds again, is not the name's (parser_overridden), and an f-string is a pattern;
- the parser of the same name in the other registry (tool <-> reasoning, and the engine registry), and
  whether they share one real (engine) class;
- chat templates and tests matched by indexer/answers/matching.py (level and what matched: name,
  registered file or real file), each template with the call markup it renders for one tool call
  (answers/markup.py: rendered as apply_chat_template would, from its text in the code store);
- plants and HACK/TODO/FIXME/XXX markers in the name's own code files;
- first and last indexed version, when it became unified, when its real file or code changed, removal;
- upstream links for every file at the card's version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..core.links import source_url
from ..store.database import lifecycle_of
from .matching import for_version
from .plain import Model, omittable
from .successors import Maps, links
from .versions import AnswerError, newest, require, upstream_refs
from .which import check_name, gone_after, registered_name

KIND_ORDER = {"tool": 0, "reasoning": 1, "engine": 2}


@dataclass
class Place(Model):
    """A class (or a registration) at a file and line, with its upstream link."""

    class_: str | None
    file: str | None
    line: int | None
    url: str | None = None


@dataclass
class Card(Model):
    """Everything about one parser name at one version (see `tpindex card`)."""

    version: str
    kind: str
    name: str
    impl: str
    form: str | None
    aliases: list[str]
    registry: Place
    registered: Place
    real: Place
    adapter: str | None = None
    wrapper: Place | None = None
    dispatch: Place | None = (
        None  # the hard-coded era (cli-choices): the class the serving code picks by name
    )
    reason: str | None = None
    stub: bool = False
    reexport: bool = False
    parent_class: str | None = None
    streaming: str | None = None
    streaming_method: dict | None = None
    streaming_from: list[str] = field(default_factory=list)  # other names whose registered class streams
    # overriding __init__s whose bindings the real class's parsing methods read: class, file, line, end_line,
    # attributes, url (the `init` hops)
    rebinds: list[dict] = field(default_factory=list)
    code_files: list[dict] = field(default_factory=list)
    methods: list[dict] = field(default_factory=list)
    attributes: list[dict] = field(default_factory=list)
    adjust_request: list[dict] = field(default_factory=list)
    sentinels: list[dict] = field(default_factory=list)
    pairs: list[dict] = field(default_factory=list)
    chat_templates: list[dict] = field(default_factory=list)
    tests: list[dict] = field(default_factory=list)
    plants: list[dict] = field(default_factory=list)
    markers: list[dict] = field(default_factory=list)
    lifecycle: dict | None = None
    notes: list[str] = field(default_factory=list)
    # internal: (class, attribute) -> how a more derived class overrides it (hidden_by), for fit's regexes
    _hidden: dict = field(default_factory=dict, repr=False)
    # the behaviour atlas's ranges of versions where the name's cells are wrong or an error (answers/atlas.py
    # behaviour(): what, status, cells, first, last, fixed_in, before, example), when the atlas ran it
    behaviour: list[dict] = omittable()


@dataclass
class CardSet(Model):
    """`tpindex card --format json`: the cards of one version (one per kind of the name, or every name)."""

    version: str
    cards: list[Card]


class Links:
    def __init__(self, db, version: str):
        self.upstream, refs = upstream_refs(db, [version])
        self.ref = refs.get(version, version)

    def __call__(self, path: str | None, line: int | None = None) -> str | None:
        return source_url(self.upstream, self.ref, path, line) if path else None


def _rows(db, sql: str, params) -> list[dict]:
    return [dict(r) for r in db.query(sql, params)]


def _by_key(rows: list[dict]) -> dict[tuple[str, str], list[dict]]:
    out: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        out.setdefault((r["kind"], r["name"]), []).append(r)
    return out


def cards(db, name: str | None = None, at: str | None = None, kind: str | None = None) -> list[Card]:
    """The cards of a name (each kind it is registered as, or `kind`) at a version (default: the newest),
    or of every name of the version when `name` is None."""
    if name is not None:
        name = registered_name(db, name)
        check_name(db, name)
    version = require(db, at) if at else newest(db)
    where, params = "version = ?", [version]
    if name is not None:
        where, params = where + " and name = ?", params + [name]
    if kind is not None:
        where, params = where + " and kind = ?", params + [kind]
    rows = _rows(db, f"select * from parser_map_v where {where}", params)
    if name is not None and not rows:
        _not_registered(db, name, version, kind)
    rows.sort(key=lambda r: (KIND_ORDER.get(r["kind"], 9), r["kind"], r["name"]))
    link = Links(db, version)
    methods = _by_key(
        _rows(db, f"select * from parser_methods_v where {where} order by role, method", params)
    )
    attrs = _by_key(_rows(db, f"select * from parser_attrs_v where {where} order by attribute, role", params))
    code = _by_key(_rows(db, f"select * from parser_code_v where {where} order by shared, file", params))
    over = _by_key(_rows(db, f"select * from parser_overridden_v where {where}", params))
    owned = _owned(db, version)
    own_files = sorted({c["file"] for cs in code.values() for c in cs if not c["shared"]})
    in_own = f"version = ? and file in ({', '.join('?' * len(own_files))})"
    sentinels = _rows(
        db, f"select * from sentinels_v where {in_own} order by file, line", [version, *own_files]
    )
    settings = _rows(db, "select * from request_settings_v where version = ? order by file, line", [version])
    plants = _rows(db, f"select * from plants_v where {in_own} order by file, line", [version, *own_files])
    markers = _rows(db, f"select * from markers_v where {in_own} order by file, line", [version, *own_files])
    everyone = _by_key(
        _rows(
            db,
            "select kind, name, impl, real_class, real_module, real_file, real_line"
            " from parser_map_v where version = ?",
            [version],
        )
    )
    life = {
        (r["kind"], r["name"]): r
        for r in _rows(db, *(lifecycle_of(name) if name else ("select * from lifecycle", [])))
    }
    matched = for_version(db, version)
    rendered: dict[str, dict] = {}  # a template's call markup, once per card set
    maps = Maps(db)
    picked = (
        _by_key(_rows(db, f"select * from parser_hops_v where {where} and hop = 'dispatch'", params))
        if any(r["form"] == "cli-choices" for r in rows)
        else {}
    )
    inits = _by_key(
        _rows(db, f"select * from parser_hops_v where {where} and hop = 'init' order by step", params)
    )
    out = []
    for r in rows:
        key = (r["kind"], r["name"])
        c = _card(version, r, link)
        if key in picked:
            h = picked[key][0]
            c.dispatch = Place(h["class"], h["file"], h["line"], link(h["file"], h["line"]))
        c.rebinds = [
            {
                "class": h["class"],
                "file": h["file"],
                "line": h["line"],
                "end_line": h["end_line"],
                "attributes": (h["detail"] or "").split(),
                "url": link(h["file"], h["line"]),
            }
            for h in inits.get(key, [])
        ]
        ms, files = methods.get(key, []), code.get(key, [])
        c.code_files = [
            {
                "file": f["file"],
                "roles": f["roles"].split(","),
                "shared": bool(f["shared"]),
                "url": link(f["file"]),
            }
            for f in files
        ]
        c.methods = [
            {
                "role": m["role"],
                "method": m["method"],
                "class": m["defining_class"],
                "file": m["file"],
                "line": m["line"],
                "body": m["body"],
                "own": bool(m["own"]),
                "url": link(m["file"], m["line"]),
            }
            for m in ms
            if m["body"] != "absent" or m["role"] in ("registered", "engine")
        ]
        c.streaming_method = _streaming_method(c)
        c.attributes = [
            {
                "role": a["role"],
                "attribute": a["attribute"],
                "value": a["value"],
                "class": a["defining_class"],
                "file": a["file"],
                "line": a["line"],
                "set_by": a["set_by"],
                "condition": a["condition"],
                "url": link(a["file"], a["line"]),
            }
            for a in attrs.get(key, [])
        ]
        c.adjust_request = _adjust_request(ms, settings, link)
        mine = {f["file"] for f in files if not f["shared"]}
        hidden = c._hidden = hidden_by(over.get(key, []))
        c.sentinels = _sentinels(
            r, ms, mine, [s for s in sentinels if not _overridden(s, hidden)], owned, link
        )
        c.plants = [
            {
                "plant": p["plant"],
                "file": p["file"],
                "line": p["line"],
                "text": p["text"],
                "url": link(p["file"], p["line"]),
            }
            for p in plants
            if p["file"] in mine
        ]
        c.markers = [
            {
                "kind": m["kind"],
                "file": m["file"],
                "line": m["line"],
                "text": m["text"],
                "url": link(m["file"], m["line"]),
            }
            for m in markers
            if m["file"] in mine
        ]
        c.pairs = _pairs(r, everyone)
        m = matched.get(key, {"chat_templates": [], "tests": []})
        c.chat_templates = [
            {
                "file": x.file,
                "level": x.level,
                "via": x.via,
                "url": link(x.file),
                **_markup(db, version, x.file, rendered),
            }
            for x in m["chat_templates"]
        ]
        c.tests = [{"file": x.file, "level": x.level, "via": x.via, "url": link(x.file)} for x in m["tests"]]
        c.lifecycle = (
            {k: v for k, v in life[key].items() if k not in ("kind", "name")} if key in life else None
        )
        if c.lifecycle:  # who took over at its removal, who it was renamed from (answers/successors.py)
            c.lifecycle.update(
                links(
                    db,
                    *key,
                    c.lifecycle["first_version"],
                    c.lifecycle["last_version"],
                    c.lifecycle["removed_in"],
                    maps,
                )
            )
        out.append(c)
    return out


def _markup(db, version: str, path: str, rendered: dict[str, dict]) -> dict:
    """The tool-call markup a chat template renders for one call (stored by the build, extract/templates.py):
    `markup` (null when it renders none, or its text is not stored), `shape` in words, `render_error`."""
    if path not in rendered:
        from . import markup

        _, r = markup.shipped(db, version, path)  # stored by the build
        if r is None:
            rendered[path] = {
                "markup": None,
                "shape": None,
                "render_error": "its text is not stored in this database"
                " (built by an older tpindex): build the version again",
            }
        else:
            rendered[path] = {
                "markup": r.call or None,
                "shape": markup.describe(markup.shapes(r.call)) if r.call else None,
                "render_error": r.error or (r.notes[0] if r.notes and not r.call else None),
            }
    return rendered[path]


def _not_registered(db, name: str, version: str, kind: str | None):
    present = [
        r[0]
        for r in db.execute(
            "select distinct version from parser_map_v where name = ?"
            + (" and kind = ?" if kind else "")
            + " order by version_ord",
            [name] + ([kind] if kind else []),
        )
    ]
    what = f"{name!r}" + (f" ({kind} parser)" if kind else "")
    if not present:
        raise AnswerError(f"{what} is not registered in any indexed version", "drop --kind to see every kind")
    span = present[0] if len(present) == 1 else f"{present[0]} – {present[-1]}"
    raise AnswerError(
        f"{what} is not registered at {version} (it is in {len(present)} indexed version(s):"
        f" {span}){gone_after(db, name, kind, version)}",
        f"ask another version with --at, e.g. --at {present[-1]}",
    )


def _card(version: str, r: dict, link: Links) -> Card:
    notes = list(json.loads(r["notes"])) if r.get("notes") else []
    wrapper = (
        Place(
            r["wrapper_class"],
            r["wrapper_file"],
            r["wrapper_line"],
            link(r["wrapper_file"], r["wrapper_line"]),
        )
        if r["wrapper_class"]
        else None
    )
    return Card(
        version=version,
        kind=r["kind"],
        name=r["name"],
        impl=r["impl"],
        form=r["form"],
        aliases=[a.strip() for a in (r["alias_of"] or "").split(",") if a.strip()],
        registry=Place(
            None, r["registry_file"], r["registry_line"], link(r["registry_file"], r["registry_line"])
        ),
        registered=Place(r["reg_class"], r["reg_file"], r["reg_line"], link(r["reg_file"], r["reg_line"])),
        real=Place(r["real_class"], r["real_file"], r["real_line"], link(r["real_file"], r["real_line"])),
        adapter=r["adapter"],
        wrapper=wrapper,
        reason=r["reason"],
        stub=bool(r["stub"]),
        reexport=bool(r["reexport"]),
        parent_class=r["parent_class"],
        streaming=r["streaming"],
        notes=notes,
        streaming_from=[x.strip() for x in (r["streaming_from"] or "").split(",") if x.strip()],
    )


def _streaming_method(c: Card) -> dict | None:
    """The streaming method as the side that does the parsing resolves it (engine, composed, else
    registered), for the name's kind (resolve/vocabulary.py's STREAMING)."""
    from ..resolve.vocabulary import STREAMING

    for role in ("engine", "composed", "registered"):
        for name in STREAMING[c.kind]:
            m = next(
                (m for m in c.methods if m["role"] == role and m["method"] == name and m["body"] != "absent"),
                None,
            )
            if m is not None:
                return m
    return None


def _adjust_request(ms: list[dict], settings: list[dict], link: Links) -> list[dict]:
    """The adjust_request definitions that run, in call order: the registered class's, then the engine
    class's when the first hands the call on to `self._parser_engine.adjust_request` (or the composed
    class's, for a name the parser manager composes)."""
    rows = {m["role"]: m for m in ms if m["method"] == "adjust_request" and m["body"] != "absent"}
    chain = []
    first = rows.get("composed") or rows.get("registered")
    if first is not None:
        chain.append(first)
        if (first.get("delegates") or "").endswith(".adjust_request") and "engine" in rows:
            chain.append(rows["engine"])
    out = []
    for m in chain:
        sets = [
            {
                "field": s["field"],
                "value": s["value"],
                "guard": s["guard"],
                "line": s["line"],
                "url": link(s["file"], s["line"]),
            }
            for s in settings
            if s["file"] == m["file"] and m["line"] <= s["line"] <= (m["end_line"] or m["line"])
        ]
        out.append(
            {
                "class": m["defining_class"],
                "file": m["file"],
                "line": m["line"],
                "body": m["body"],
                "calls_super": bool(m["calls_super"]),
                "delegates": m["delegates"],
                "sets": sets,
                "url": link(m["file"], m["line"]),
            }
        )
    return out


def name_sentinels(db, name: str, version: str, kind: str) -> list[dict]:
    """The sentinels of one name's card (the rule of `_sentinels`, over the same rows), without the rest of the
    card: for callers that need only them (replay's vocabulary)."""
    where = [version, kind, name]
    rows = _rows(db, "select * from parser_map_v where version = ? and kind = ? and name = ?", where)
    if not rows:
        return []
    ms = _rows(db, "select * from parser_methods_v where version = ? and kind = ? and name = ?", where)
    mine = {
        r["file"]
        for r in _rows(
            db, "select file, shared from parser_code_v where version = ? and kind = ? and name = ?", where
        )
        if not r["shared"]
    }
    hidden = hidden_by(
        _rows(db, "select * from parser_overridden_v where version = ? and kind = ? and name = ?", where)
    )
    found = _rows(
        db,
        f"select * from sentinels_v where version = ? and file in ({', '.join('?' * len(mine))})"
        " order by file, line",
        [version, *sorted(mine)],
    )
    return _sentinels(
        rows[0],
        ms,
        mine,
        [s for s in found if not _overridden(s, hidden)],
        _owned(db, version),
        lambda *a: None,
    )


def hidden_by(over: list[dict]) -> dict[tuple[str, str], str | None]:
    """(class, attribute) -> how a more derived class of the name overrides it (parser_overridden.by_method:
    `__init__`, or None for a class attribute, property or method)."""
    return {(o["class"], o["attribute"]): o.get("by_method") for o in over}


def _overridden(s: dict, hidden: dict[tuple[str, str], str | None]) -> bool:
    """Whether a sentinel (or a regular expression: the same columns) is held by a class attribute or property
    that a more derived class of the name overrides, or bound in its class's `__init__` that a more derived
    class's `__init__` binds again (parser_overridden)."""
    key = (s["class"], s["attribute"])
    if not (s["class"] and s["attribute"]) or key not in hidden:
        return False
    where = (None, f"{s['class']}.{s['attribute']}")
    return s["function"] in (where if hidden[key] is None else (*where, f"{s['class']}.__init__"))


_TOKEN_SHAPED = re.compile(r"\s*[<\[].*[>\]=]\s*", re.S)  # a helper class's sentinels: token-shaped ones only


def _owned(db, version: str) -> set[tuple[str, str]]:
    """(file, class) of every class some name of the version has as a role or defining a contract method."""
    out = set()
    for r in db.query(
        "select reg_file, reg_class, real_file, real_class, wrapper_file, wrapper_class"
        " from parser_map_v where version = ?",
        [version],
    ):
        out.update(
            (f, c)
            for f, c in (
                (r["reg_file"], r["reg_class"]),
                (r["real_file"], r["real_class"]),
                (r["wrapper_file"], r["wrapper_class"]),
            )
            if f and c
        )
    out.update(
        (r["file"], r["defining_class"])
        for r in db.query(
            "select distinct file, defining_class from parser_methods_v where version = ? and defining_class is not null",
            [version],
        )
    )
    return out


def _sentinels(
    r: dict, ms: list[dict], mine: set[str], rows: list[dict], owned: set[tuple[str, str]], link: Links
) -> list[dict]:
    """Sentinels of the name's own code, one entry per value, in order of first appearance (the real file
    first), with every place it appears: at module level, in the name's classes, or, shaped like a token
    (`<...>`, `[...]`, `<...=`), in a class of its files that is no other name's (a helper, such as an
    extractor class the parser uses)."""
    classes = {r["real_class"], r["reg_class"], r["wrapper_class"]}
    classes |= {m["defining_class"] for m in ms if m["file"] in mine}
    classes.discard(None)
    first = [r["real_file"]] if r["real_file"] in mine else []
    order = {f: i for i, f in enumerate(first + sorted(mine - set(first)))}
    picked = [
        s
        for s in rows
        if s["file"] in mine
        and (
            s["class"] is None
            or s["class"].split(".")[0] in classes
            or ((s["file"], s["class"].split(".")[0]) not in owned and _TOKEN_SHAPED.fullmatch(s["value"]))
        )
    ]
    picked.sort(key=lambda s: (order[s["file"]], s["line"]))
    out: dict[str, dict] = {}
    for s in picked:
        entry = out.setdefault(
            s["value"],
            {
                "value": s["value"],
                "non_ascii": s["non_ascii"],
                "attributes": [],
                "places": [],
                "escaped": s["value"].encode("ascii", "backslashreplace").decode()
                if s["non_ascii"]
                else None,
            },
        )
        if s["attribute"] and s["attribute"] not in entry["attributes"]:
            entry["attributes"].append(s["attribute"])
        entry["places"].append(
            {
                "file": s["file"],
                "line": s["line"],
                "class": s["class"],
                "how": s["how"],
                "attribute": s["attribute"],
                "url": link(s["file"], s["line"]),
            }
        )
    return list(out.values())


def _pairs(r: dict, everyone: dict) -> list[dict]:
    out = []
    for kind in ("tool", "reasoning", "engine"):
        if kind == r["kind"]:
            continue
        for o in everyone.get((kind, r["name"]), []):
            same = bool(r["real_class"]) and (o["real_module"], o["real_class"]) == (
                r["real_module"],
                r["real_class"],
            )
            out.append(
                {
                    "kind": kind,
                    "name": o["name"],
                    "impl": o["impl"],
                    "real_class": o["real_class"],
                    "real_file": o["real_file"],
                    "real_line": o["real_line"],
                    "shares_real_class": same,
                }
            )
    return out
