"""Names from what an operator types: a model ("GLM-4.7", "Qwen3-Coder-30B-A3B-Instruct", "DeepSeek-V3.1"), a
parser name in any case, a prefix, a class or file name. Case and punctuation do not count.

A name is known by its keys (answers/matching.py): the name, the stems of its registered and real files, and
its real and registered classes split at their capitals (`Glm47MoeParser`: glm47, moe), each at the newest
version that registers it. The query goes through the levels the chat-template matching uses (exact, more
specific: `qwen3_coder_30b` -> qwen3_coder, family: `glm4` -> glm45 and glm47, more general), and every name
that starts with it is a hit too (`qwen3` -> the qwen3 reasoning parser and qwen3_coder, qwen3_xml, ...).

Then what the version's prose says (answers/docwords.py): the model-family words of the docstrings of the
name's real and registered classes, and the model ids and headings the tool-calling documentation gives the
name, each word a key of its own, through the same levels (without the family level, which is for names):
`GLM-4.6`, named only in the documentation's GLM-4.5 section, finds glm45 (a name found both ways keeps its own
match; found by both kinds of prose, the better level; a prose hit worse than the best match by a name's own
keys is left out: `DeepSeek-V3.1` is deepseek_v31, not every docstring saying DeepSeek). Hits are ordered by level, a name's own match first
within one; a prose hit says the file and line its word was read at. A query nothing matches goes to names
containing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .matching import LEVELS, Named, compact, owners, stem, words
from .plain import Model

KIND_ORDER = ("tool", "reasoning", "engine")


@dataclass
class NameHit(Model):
    kind: str
    name: str
    level: str  # exact | more specific | family | more general | prefix | contains
    via: str  # name | registered file | real file | real class | registered class
    key: str  # the key that matched: the name, a file, a class, a word of the prose
    version: str  # the newest version that registers the name
    file: str | None = None  # where a word of the prose was read (docstring, docs)
    line: int | None = None


def class_words(cls: str | None) -> list[str]:
    """A class name split at its capitals, without the generic words: Glm47MoeParser -> [glm47, moe]."""
    if not cls:
        return []
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+", cls.rsplit(".", 1)[-1])
    return words("_".join(parts))


def find_names(db, q: str) -> list[NameHit]:
    """The parser names a query means, best first (see the module docstring); [] when none."""
    subject = words(q)
    want = compact(subject)
    if not want:
        return []
    latest: dict[tuple[str, str], dict] = {}
    for r in db.query(
        "select kind, name, reg_file, reg_line, real_file, real_line, real_class, reg_class, version"
        " from parser_map_v"
        " order by version_ord"
    ):
        latest[(r["kind"], r["name"])] = dict(r)
    pool, what = [], {}
    for (kind, name), r in latest.items():
        keys = [("name", words(name))]
        for via, path in (("registered file", r["reg_file"]), ("real file", r["real_file"])):
            if path and words(stem(path)):
                keys.append((via, words(stem(path))))
                what[(kind, name, via)] = path
        for via, cls in (("real class", r["real_class"]), ("registered class", r["reg_class"])):
            if class_words(cls):
                keys.append((via, class_words(cls)))
                what[(kind, name, via)] = cls
        pool.append(Named(kind, name, keys))
    hits: dict[tuple[str, str], NameHit] = {}

    def add(kind: str, name: str, level: str, via: str, said: tuple | None = None) -> None:
        if (kind, name) not in hits:
            key, file, line = said or (what.get((kind, name, via), name), None, None)
            hits[(kind, name)] = NameHit(
                kind, name, level, via, key, latest[(kind, name)]["version"], file, line
            )

    for n in pool:  # the name itself, whatever else matches
        if compact(words(n.name)) == want:
            add(n.kind, n.name, "exact", "name")
    for n, level, via in owners(subject, None, pool):
        add(n.kind, n.name, level, via)
    for n in pool:
        if compact(words(n.name)).startswith(want):
            add(n.kind, n.name, "prefix", "name")
    own = set(hits)
    order = LEVELS + ("prefix", "contains")
    best: dict[
        tuple[str, str], tuple
    ] = {}  # a name the prose finds: its best level, docstrings first on a tie
    for via, prose in _prose(db, latest).items():
        said = {id(n): where for n, where in prose}
        for n, level, _ in owners(subject, None, [n for n, _ in prose]):
            key = (n.kind, n.name)
            if key not in own and (key not in best or LEVELS.index(level) < LEVELS.index(best[key][0])):
                best[key] = (level, via, said[id(n)])
    bar = min((order.index(h.level) for h in hits.values()), default=len(order))
    for (kind, name), (level, via, said) in best.items():
        if order.index(level) <= bar:  # no worse than the best match by a name's own keys
            add(kind, name, level, via, said)
    if not hits:
        for n in pool:
            if want in compact(words(n.name)):
                add(n.kind, n.name, "contains", "name")
    # within a level, the name that is the query itself first, then by name and kind
    return sorted(
        hits.values(),
        key=lambda h: (
            order.index(h.level),
            (h.kind, h.name) not in own,
            compact(words(h.name)) != want,
            h.name,
            KIND_ORDER.index(h.kind) if h.kind in KIND_ORDER else 9,
        ),
    )


def _prose(db, latest: dict[tuple[str, str], dict]) -> dict[str, list[tuple[Named, tuple]]]:
    """via -> [(a Named with one word of the prose as its key, (word, file, line))] for every name at its newest
    version: the family words of its classes' docstrings, and the documentation's words for a tool parser."""
    from .docwords import doc_claims, docstring, family_words

    out: dict[str, list[tuple[Named, tuple]]] = {"docstring": [], "docs": []}

    def one(via: str, kind: str, name: str, word: str, file: str, line: int) -> None:
        if words(word):
            n = Named(kind, name, [(via, words(word))])
            n.fam = None  # the family level is for names
            out[via].append((n, (word, file, line)))

    from ..store.code import Lines

    docs: dict[str, object] = {}
    lines = Lines(db)  # each page of stored lines read once for every docstring
    for (kind, name), r in latest.items():
        for file, line in dict.fromkeys(((r["real_file"], r["real_line"]), (r["reg_file"], r["reg_line"]))):
            if file and line:
                for word in family_words(docstring(db, r["version"], file, line, lines) or ""):
                    one("docstring", kind, name, word, file, line)
        if kind == "tool":
            if r["version"] not in docs:
                docs[r["version"]] = doc_claims(db, r["version"])
            claims = docs[r["version"]]
            for s in claims.names.get(name, []) if claims else []:
                one("docs", kind, name, s.word, claims.path, s.line)
    return out
