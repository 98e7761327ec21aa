"""Chat templates and tests of a parser name, matched by file name (used by `export` and `card`).

A file's *subject* is what its name says it is about:

- a chat template `examples/tool_chat_template_<S>.jinja`: S, for tool parsers;
- a test `test_<S>.py`: S; under `tests/parser/<model>/` (not `engine/`) or `tests/tool_use/<model>/`, the
  directory `<model>`. Its kind: `reasoning` when a word of its name is `reasoning`, `tool` when one is
  `tool` (tool_parser, tool_calls, named_tool_choice), else the directory's (`tests/reasoning/` reasoning,
  `.../tool_parsers/` and `tests/tool_use/` tool), else any kind (`tests/parser/engine/test_qwen3.py` tests
  the engine class both kinds use).

The generic words tool, tools, parser, reasoning and engine are dropped from subjects and keys. A name's
*keys* are the name itself, the stem of its registered file and the stem of its real file
(`qwen3_coder`: qwen3_coder, qwen3 from `qwen3_engine_tool_parser.py`, qwen3 from `vllm/parser/qwen3.py`).

Each file goes to the names (of its kind) of the first level that finds any:

1. **exact**: the subject equals a key, ignoring case and punctuation (`deepseekv3` = `deepseek_v3`,
   `qwen3coder` = `qwen3_coder`, `phi4_mini` = the stem of `phi4mini_tool_parser.py`);
2. **more specific**: a key's words are the first words of the subject, the longest such key
   (`mistral_parallel` -> mistral, `xlam_qwen` -> xlam, `kimi_k3_named_tool_choice` -> kimi_k3);
3. **family**, names only (a file stem is shared by several names): the subject and the name split into
   letters, a version (digits and dots; dots ignored) and the rest; the letters are equal, one version is
   a prefix of the other (an empty one is a prefix of any), and the rests are equal or one is empty
   (`glm4` -> glm45 and glm47; `llama3.1_json` -> llama3_json, not llama4_json; `mistral3` -> mistral;
   `internlm2_tool` -> internlm);
4. **more general**: the subject's words are the first words of a key (`test_hunyuan_reasoning_parser` ->
   hunyuan_a13b).

Within a level and a kind, a match by name beats one by registered file, which beats one by real file
(`test_hermes_tool_parser.py` is hermes's, not also longcat's whose real file is hermes's; but
`tests/parser/engine/test_qwen3.py` is the qwen3 reasoning parser's by name and qwen3_coder's and
qwen3_xml's by real file). A file no level matches stays unmatched (`toolace`, `llama3.2_pythonic`): never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TEMPLATE_PREFIX = "examples/tool_chat_template_"
GENERIC = {"tool", "tools", "parser", "reasoning", "engine"}
LEVELS = ("exact", "more specific", "family", "more general")
# the classes and the prose: answers/search.py
VIAS = ("name", "registered file", "real file", "real class", "registered class", "docstring", "docs")


@dataclass(frozen=True)
class Match:
    file: str
    level: str  # one of LEVELS
    via: str  # name | registered file | real file


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


_BREAKS = re.compile(r"[_\-\s]+")
_TEST_BREAKS = re.compile(r"[_\-]+")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")
_FAMILY = re.compile(r"([a-z]+)([0-9.]*)(.*)")


def words(s: str) -> list[str]:
    return [w for w in _BREAKS.split(s.lower()) if w and w not in GENERIC]


def compact(ws: list[str]) -> str:
    return _NOT_ALNUM.sub("", "".join(ws))


def family(ws: list[str]) -> tuple[str, str, str] | None:
    m = _FAMILY.match("".join(ws))
    if not m:
        return None
    return m.group(1), m.group(2).replace(".", ""), _NOT_ALNUM.sub("", m.group(3))


def same_family(a: tuple | None, b: tuple | None) -> bool:
    if a is None or b is None or a[0] != b[0]:
        return False
    va, vb = a[1], b[1]
    return (va.startswith(vb) or vb.startswith(va)) and (a[2] == b[2] or not a[2] or not b[2])


@dataclass
class Named:
    kind: str
    name: str
    keys: list[tuple[str, list[str]]]  # (via, words)
    # what every file is compared with, computed once per name rather than once per (file, name)
    compact_keys: list[str] = field(init=False)  # compact(words) of each key
    fam: tuple[str, str, str] | None = field(init=False)  # family() of the name

    def __post_init__(self) -> None:
        self.compact_keys = [compact(k) for _, k in self.keys]
        self.fam = family(self.keys[0][1])


def named(kind: str, name: str, reg_file: str | None, real_file: str | None) -> Named:
    keys = [("name", words(name))]
    for via, path in (("registered file", reg_file), ("real file", real_file)):
        ws = words(stem(path)) if path else []
        if ws:
            keys.append((via, ws))
    return Named(kind, name, keys)


def template_subject(path: str) -> tuple[list[str], str | None] | None:
    if not (path.startswith(TEMPLATE_PREFIX) and path.endswith(".jinja")):
        return None
    return words(stem(path)[len("tool_chat_template_") :]), "tool"


def test_subject(path: str) -> tuple[list[str], str | None] | None:
    s = stem(path)
    if not (path.startswith("tests/") and path.endswith(".py") and s.startswith("test_")):
        return None
    raw = _TEST_BREAKS.split(s[len("test_") :].lower())
    kind = "reasoning" if "reasoning" in raw else "tool" if "tool" in raw else None
    parts = path.split("/")
    if kind is None:
        kind = (
            "reasoning"
            if "reasoning" in parts[:-1]
            else "tool"
            if any(p.endswith("tool_parsers") or p == "tool_use" for p in parts[:-1])
            else None
        )
    if (
        len(parts) == 4 and parts[1] in ("parser", "tool_use") and parts[2] != "engine"
    ):  # tests/parser/<model>/
        return words(parts[2]), kind
    return words(s[len("test_") :]), kind


class Keys:
    """The keys of a list of names, looked up by what a subject is compared with at each level: its compact form
    (exact), its first words (more specific: a key's words), its family's letters (family: a name's), its words
    (more general: a key's first words); each entry (name, via) in the order of the names and of their keys.
    Built once for the files of a version (`assign`), instead of every key compared with every file's subject."""

    def __init__(self, names: list[Named]):
        self.compact: dict[str, list[tuple[Named, str]]] = {}
        self.words: dict[tuple[str, ...], list[tuple[Named, str]]] = {}
        self.letters: dict[str, list[tuple[Named, str]]] = {}
        self.starts: dict[
            tuple[str, ...], list[tuple[Named, str]]
        ] = {}  # every shorter start of a key's words
        for n in names:
            if n.fam is not None:
                self.letters.setdefault(n.fam[0], []).append((n, "name"))
            for (via, k), c in zip(n.keys, n.compact_keys, strict=True):
                self.compact.setdefault(c, []).append((n, via))
                self.words.setdefault(tuple(k), []).append((n, via))
                for size in range(1, len(k)):
                    self.starts.setdefault(tuple(k[:size]), []).append((n, via))


def owners(subject: list[str], kind: str | None, names: list[Named] | Keys) -> list[tuple[Named, str, str]]:
    """The names a file with this subject goes to: [(name, level, via)] at the first level that finds any."""
    keys = names if isinstance(names, Keys) else Keys(names)

    def mine(n: Named) -> bool:
        return kind is None or n.kind == kind or n.kind == "engine"

    if not subject:
        return []
    found = [(n, "exact", via) for n, via in keys.compact.get(compact(subject), ()) if mine(n)]
    if not found:  # the longest key whose words are the subject's first words
        for size in range(len(subject) - 1, -1, -1):
            found = [
                (n, "more specific", via) for n, via in keys.words.get(tuple(subject[:size]), ()) if mine(n)
            ]
            if found:
                break
    if not found:
        fam = family(subject)
        found = [
            (n, "family", via)
            for n, via in keys.letters.get(fam[0] if fam else "", ())
            if mine(n) and same_family(fam, n.fam)
        ]
    if not found:  # keys whose first words are the subject's words
        found = [(n, "more general", via) for n, via in keys.starts.get(tuple(subject), ()) if mine(n)]
    best: dict[str, int] = {}  # per kind, a match by name beats one by registered file, then by real file
    for n, _, via in found:
        best[n.kind] = min(best.get(n.kind, len(VIAS)), VIAS.index(via))
    out, seen = [], set()
    for n, level, via in found:  # one entry per name
        if VIAS.index(via) == best[n.kind] and (n.kind, n.name) not in seen:
            seen.add((n.kind, n.name))
            out.append((n, level, via))
    return out


def assign(paths: list[str], names: list[Named]) -> dict[tuple[str, str], dict[str, list[Match]]]:
    """(kind, name) -> {"chat_templates": [Match], "tests": [Match]} for the in-scope files of a version."""
    out: dict[tuple[str, str], dict[str, list[Match]]] = {
        (n.kind, n.name): {"chat_templates": [], "tests": []} for n in names
    }
    keys = Keys(names)
    for path in sorted(paths):
        subject = template_subject(path)
        what = "chat_templates"
        if subject is None:
            subject, what = test_subject(path), "tests"
        if subject is None:
            continue
        ws, kind = subject
        for n, level, via in owners(ws, kind, keys):
            out[(n.kind, n.name)][what].append(Match(path, level, via))
    return out


def for_version(db, version: str) -> dict[tuple[str, str], dict[str, list[Match]]]:
    """Templates and tests of every name of a version, from the database."""
    paths = [
        r[0]
        for r in db.execute(
            "select file from version_files where version = ? and (file like 'examples/%' or file like 'tests/%')",
            [version],
        )
    ]
    names = [
        named(k, n, reg, real)
        for k, n, reg, real in db.execute(
            "select kind, name, reg_file, real_file from parser_map_v where version = ? order by kind, name",
            [version],
        )
    ]
    return assign(paths, names)
