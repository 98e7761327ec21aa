"""Names from what an operator types: a model ("GLM-4.7", "Qwen3-Coder-30B-A3B-Instruct", "DeepSeek-V3.1"), a
parser name in any case, a prefix, a class or file name. Case and punctuation do not count.

A name is known by its keys (answers/matching.py): the name, the stems of its registered and real files, and
its real and registered classes split at their capitals (`Glm47MoeParser`: glm47, moe), each at the newest
version that registers it. The query goes through the levels the chat-template matching uses (exact, more
specific: `qwen3_coder_30b` -> qwen3_coder, family: `glm4` -> glm45 and glm47, more general), and every name
that starts with it is a hit too (`qwen3` -> the qwen3 reasoning parser and qwen3_coder, qwen3_xml, ...). A
query nothing matches goes to names containing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .matching import LEVELS, Named, compact, owners, stem, words
from .model import Model

KIND_ORDER = ("tool", "reasoning", "engine")


@dataclass
class NameHit(Model):
    kind: str
    name: str
    level: str  # exact | more specific | family | more general | prefix | contains
    via: str  # name | registered file | real file | real class | registered class
    key: str  # the key that matched: the name, a file, a class
    version: str  # the newest version that registers the name


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
    for r in db.query("select kind, name, reg_file, real_file, real_class, reg_class, version from parser_map_v"
                      " order by version_ord"):
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

    def add(kind: str, name: str, level: str, via: str) -> None:
        if (kind, name) not in hits:
            hits[(kind, name)] = NameHit(kind, name, level, via, what.get((kind, name, via), name),
                                         latest[(kind, name)]["version"])

    for n in pool:  # the name itself, whatever else matches
        if compact(words(n.name)) == want:
            add(n.kind, n.name, "exact", "name")
    for n, level, via in owners(subject, None, pool):
        add(n.kind, n.name, level, via)
    for n in pool:
        if compact(words(n.name)).startswith(want):
            add(n.kind, n.name, "prefix", "name")
    if not hits:
        for n in pool:
            if want in compact(words(n.name)):
                add(n.kind, n.name, "contains", "name")
    order = LEVELS + ("prefix", "contains")
    # within a level, the name that is the query itself first, then by name and kind
    return sorted(hits.values(), key=lambda h: (order.index(h.level), compact(words(h.name)) != want, h.name,
                                                KIND_ORDER.index(h.kind) if h.kind in KIND_ORDER else 9))
