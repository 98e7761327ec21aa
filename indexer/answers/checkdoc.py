"""`check-doc`: check a Markdown document's claims (docclaims.py) against the index at one or more versions.

Each claim gets a status at each version:
    ok         true at that version (evidence attached)
    stale      true once, not at that version: what is true instead, and since when
    too-new    not true yet at that version: true from a later version (the document is ahead of it)
    wrong      never true in any indexed version (a version claim: with the true version)
    unchecked  the index cannot tell (why: a version without --tree, a version not indexed, a phrase it
               cannot read, a pairing it is not sure of)
One function, `check_document`, serves the command and the browser page.
"""

from __future__ import annotations

import re

from ..core import ranges
from ..core.paths import has_file_suffix
from ..core.specs import parse_version, sort_key
from ..core.suggest import close_names
from ..extract.words import WORD_SUFFIXES
from .docclaims import Claim, Knowledge, TooManyClaims, read
from .model import CheckDoc, ClaimResult, ParserEvidence, PathEvidence, SourceEvidence, VersionCheck
from .trees import PLACEHOLDER, Def, TreeIndex, to_glob
from .versions import AnswerError, require

STATUSES = ("ok", "stale", "too-new", "wrong", "unchecked")
MAX_CLAIMS = 2000
KEYWORDS = frozenset("def class async return import from self cls lambda".split())


_span = ranges.span


def _runs(present: list[str], order: list[str]) -> str:
    """Versions as ranges of consecutive indexed versions: "v0.30.0 - v0.31.0, v0.33.0"."""
    return ranges.runs_text(ranges.runs(present, order))


class Checker:
    def __init__(self, db):
        self.db = db
        self.index = TreeIndex(db)
        self.versions = self.index.versions
        self._maps: dict[str, dict] = {}
        self._counts: dict[tuple, int] = {}

    # -- what the reader needs ---------------------------------------------------------------------------
    def knowledge(self) -> Knowledge:
        roots = {"vllm", "tests", "examples", "docs"}
        roots |= {
            r[0].split("/", 1)[0] for r in self.db.execute("select path from tree_paths") if "/" in r[0]
        }
        names = {r[0] for r in self.db.execute("select distinct name from parser_map")}
        return Knowledge(roots, names)

    def parser_map(self, version: str) -> dict[tuple[str, str], dict]:
        if version not in self._maps:
            self._maps[version] = {
                (r["kind"], r["name"]): r
                for r in self.db.query(
                    "select kind, name, impl, real_file, real_line, real_class, alias_of, registry_file, registry_line,"
                    " reg_file, reg_line from parser_map_v where version = ?",
                    [version],
                )
            }
        return self._maps[version]

    def registered(self, version: str, name: str, kind: str = "any") -> list[dict]:
        """The name's rows at a version, the tool parser first."""
        rows = [
            r for (k, n), r in self.parser_map(version).items() if n == name and (kind == "any" or k == kind)
        ]
        return sorted(
            rows,
            key=lambda r: (
                ("tool", "reasoning", "unified").index(r["kind"])
                if r["kind"] in ("tool", "reasoning", "unified")
                else 9
            ),
        )

    # -- one claim at one version -------------------------------------------------------------------------
    def check(self, claim: Claim, version: str) -> ClaimResult:
        fn = getattr(self, "_" + claim.kind)
        since = claim.data.get("from_version")
        try:
            if since and self._before(version, since):
                status, message, evidence = "unchecked", f"its table row speaks of {since} and later", []
            else:
                status, message, evidence = fn(claim.data, version)
                if (
                    claim.kind == "symbol"
                    and claim.data.get("pairing") == "sentence"
                    and status in ("stale", "too-new")
                ):
                    # only the sentence pairs them ("add a `ReasoningParser` similar to [x.py](...)"): what is
                    # no longer in the file may never have been claimed to be there
                    status, message = "unchecked", message + "; the sentence may not pair them"
        except AnswerError as e:
            status, message, evidence = "unchecked", e.message, []
        return ClaimResult(
            line=claim.line,
            kind=claim.kind,
            claim=claim.text,
            status=status,
            message=message,
            evidence=evidence,
        )

    def _unreadable(self, data: dict, version: str):
        return "unchecked", data["reason"], []

    # paths
    def _path(self, data: dict, version: str):
        """A path, by what its clause says of it (docpredicates): there (the present tense), there once (the
        past), not there (absent, gone), not to be used (avoid: says nothing of it being there), where code
        lives (a shim that only re-exports is not)."""
        predicate = data.get("predicate")
        if predicate in ("absent", "gone"):
            return self._not_there(data, version)
        status, message, evidence = self._there(data, version)
        if predicate == "avoid" and status == "stale":
            return "ok", f"not at {version}: {message}; the sentence advises against it", evidence
        if predicate == "lives" and status == "ok" and not data.get("bare"):
            return self._lives(data["path"], version, (status, message, evidence))
        return status, message, evidence

    def _lives(self, path: str, version: str, there: tuple):
        """A path said to be where code lives, there at `version`: a shim that defines no code is not."""
        ix = self.index
        if ix.holds_code(version, path) is not False:
            return there
        mods = ix.modules(version, path)
        shim = (
            f"only a shim at {version}: {_some(mods)} "
            f"{'defines' if len(mods) == 1 else 'define'} no class or function of its own"
        )
        held = [v for v in ix.tree_versions() if ix.holds_code(v, path)]
        earlier = [v for v in held if self._before(v, version)]
        if earlier:
            return (
                "stale",
                f"{shim} (code there last at {earlier[-1]})",
                [_src(version, mods[0]), _hist(path)],
            )
        if held:
            return "too-new", f"{shim}; code there from {held[0]}", [_src(held[0], mods[0])]
        return "unchecked", f"{shim}, nor in any indexed --tree version", [_src(version, mods[0])]

    def _not_there(self, data: dict, version: str, subject: dict | None = None):
        """A path (or a parser name: `subject`) the sentence says is not there ("there is no `p`", "`p` is gone",
        "`x` is no longer registered"): true where it is absent."""
        gone = data.get("predicate") == "gone"
        subject = subject or {"type": "path", "path": data["path"], "bare": data.get("bare")}
        path = subject.get("path")
        plain = (
            path is not None and not subject.get("bare") and not PLACEHOLDER.search(path) and "*" not in path
        )
        pres, what = self._presence(subject)
        at = pres(version)
        if at is None:
            return (
                "unchecked",
                f"{version} was indexed without --tree: whether {path} is there is unknown",
                [],
            )
        known = [(v, p) for v in self.versions if (p := pres(v)) is not None]
        had = [v for v, p in known if p]

        def proof(v: str) -> list:
            if subject["type"] == "parser":
                return [_parser(v, subject["name"])]
            return [_src(v, path)] if plain else []

        if not at:
            if not had:
                if gone:
                    return (
                        "unchecked",
                        f"in no indexed version ({_span(self.versions)}): was it ever there?",
                        [],
                    )
                return "ok", f"in no indexed version ({_span(self.versions)}), as the sentence says", []
            earlier = [v for v in had if self._before(v, version)]
            if not earlier:
                return "ok", f"not at {version} (first at {had[0]})", proof(had[0])
            if plain:
                how = self._gone(self.index.path_history(path), earlier[-1], version)
            else:
                how = f"removed at {_first_absent_after(known, earlier[-1])} (last at {earlier[-1]})"
            return "ok", f"not at {version}: {how}", [_hist(path)] if plain else proof(earlier[-1])
        there = "registered" if subject["type"] == "parser" else "there"
        later = [v for v, p in known if not p and self._before(version, v)]
        if later:
            return "too-new", f"still {there} at {version} ({what}); absent from {later[0]}", proof(version)
        earlier = [v for v, p in known if not p and self._before(v, version)]
        if earlier:
            return "stale", f"absent until {earlier[-1]}, {there} at {version} ({what})", proof(version)
        if path is not None and PLACEHOLDER.search(path):
            # a placeholder is the reader's to fill: never wrong
            return "unchecked", f"matches at {version} and in every indexed version ({what})", proof(version)
        return (
            "wrong",
            f"{there} at {version} and in every indexed version ({_span(self.versions)}; {what})",
            proof(version),
        )

    def _there(self, data: dict, version: str):
        path = data["path"]
        ix = self.index
        if data.get("bare"):
            if not ix.has_tree[version]:
                return "unchecked", f"{version} was indexed without --tree", []
            if any(path in ix.paths(v) for v in ix.tree_versions()):  # a file at the top: a plain path
                return self._there({**data, "bare": False}, version)
            hits = self._by_tail(version, path)
            if hits:
                return (
                    "ok",
                    "at " + ", ".join(hits[:3]) + (f" and {len(hits) - 3} more" if len(hits) > 3 else ""),
                    [_src(version, h) for h in hits[:3]],
                )
            return (
                "unchecked",
                "a bare file name that is in no file of the tree at this version (a user's file?)",
                [],
            )
        if PLACEHOLDER.search(path) or any(c in path for c in "*?["):
            return self._pattern(path, version, data)
        if not ix.knows(version, path):
            return "unchecked", f"{version} was indexed without --tree and {path} is outside its scope", []
        present = [v for v, here in ix.presence(path).items() if here]
        if ix.exists(version, path):
            if data.get("former") and present and present[-1] == self.versions[-1]:
                return (
                    "unchecked",
                    f"still present at {version}, but the sentence speaks of the past",
                    [_src(version, path)],
                )
            what = (
                "exists"
                if path in ix.paths(version)
                else f"a directory of {len(ix.files_under(version, path))} files"
            )
            return "ok", what, [_src(version, path)]
        if not present:
            if data.get("historical"):
                return (
                    "unchecked",
                    f"the sentence speaks of the past, and no indexed version "
                    f"({_span(self.versions)}) has it",
                    [],
                )
            if data.get("in_code"):
                return (
                    "unchecked",
                    f"in no indexed version ({_span(self.versions)}); a path in a command may "
                    "be one the command creates",
                    [],
                )
            if not path.endswith("/") and not has_file_suffix(path):
                return (
                    "unchecked",
                    f"in no indexed version ({_span(self.versions)}), and without a file "
                    "suffix it may not be a repository path (an image name, an output directory)",
                    [],
                )
            return "wrong", f"no such path in any indexed version ({_span(self.versions)})", []
        earlier = [v for v in present if self._before(v, version)]
        if data.get("historical") and earlier:
            return "ok", f"was there in {_runs(present, self.versions)}", [_src(earlier[-1], path)]
        if earlier:
            return (
                "stale",
                self._gone(ix.path_history(path), earlier[-1], version),
                [_src(earlier[-1], path), _hist(path)],
            )
        return "too-new", f"not yet at {version}: first at {present[0]}", [_src(present[0], path)]

    def _gone(self, hist: list[dict], last: str, version: str) -> str:
        """ "moved to X at vY (by ...)" / "removed at vY", for the absence right after version `last`; a move
        followed to where the file is at `version`: "moved to Z (at vY to X (...), then at vZ to Z (...))"."""
        for s in hist:
            if (
                not s["present"]
                and self._before(last, s["first"])
                and self.index.previous(s["first"]) == last
            ):
                if s["moves"]:
                    m = s["moves"][0]
                    chain = self.index.onward(m.to, s["first"], version)
                    if not chain.hops:
                        first = (
                            f"moved to {m.to} at {s['first']} ({m.by}{': ' + m.detail if m.detail else ''})"
                        )
                        return first + (
                            f", which was removed at {chain.removed_at}" if chain.removed_at else ""
                        )
                    steps = ", then ".join(
                        [f"at {s['first']} to {m.describe()}"]
                        + [f"at {h.at} to {h.move.describe()}" for h in chain.hops]
                    )
                    if chain.removed_at:
                        return f"removed at {chain.removed_at} (moved {steps})"
                    return f"moved to {chain.final(m)} ({steps})"
                return f"removed at {s['first']} (last at {last})"
        return f"absent (last at {last})"

    def _pattern(self, path: str, version: str, data: dict):
        ix, glob = self.index, to_glob(path)
        if not ix.has_tree[version] and not ix.glob(version, glob):
            return "unchecked", f"{version} was indexed without --tree", []
        hits = ix.glob(version, glob)
        if hits:
            shown = ", ".join(hits[:2]) + (f" and {len(hits) - 2} more" if len(hits) > 2 else "")
            return "ok", f"{len(hits)} path(s) match: {shown}", [_src(version, hits[0])]
        matched = [v for v in self.versions if ix.glob(v, glob)]
        if not matched:
            return "wrong", f"matches no path in any indexed version ({_span(self.versions)})", []
        earlier = [v for v in matched if self._before(v, version)]
        if data.get("historical") and earlier:
            return "ok", f"matched in {_runs(matched, self.versions)}", []
        if earlier:
            nxt = self.versions[self.versions.index(earlier[-1]) + 1]
            return (
                "stale",
                f"matches nothing since {nxt} (last matched at {earlier[-1]}: "
                f"{ix.glob(earlier[-1], glob)[0]})",
                [_hist(path)],
            )
        return "too-new", f"matches nothing at {version}; first matches at {matched[0]}", []

    # symbols named with a file
    def _symbol(self, data: dict, version: str):
        ix = self.index
        if not ix.has_tree[version]:
            return (
                "unchecked",
                f"{version} was indexed without --tree: its definitions and mentions are unknown",
                [],
            )
        sym, where = data["symbol"], data["file"].rstrip("/")
        if _bare(where):  # a bare file name: the one file of that name, as a path claim resolves it
            where = self._bare_file(where, version)
            if where.startswith("?"):
                return "unchecked", where[1:], []
        words = self._words(sym, data)
        if isinstance(words, str):
            return "unchecked", words, []
        qual = sym if data.get("grep") is None and re.fullmatch(r"[\w.]+", sym) else None
        directory = data["file"].endswith("/") or (
            where not in ix.paths(version) and bool(ix.files_under(version, where))
        )

        def found(v: str) -> tuple[str, list] | None:
            files = ix.files_under(v, where) if directory else ([where] if where in ix.paths(v) else [])
            if not files:
                return None
            if qual:
                in_files = set(files)
                defs = [
                    d
                    for d in ix.defs(qual.rpartition(".")[2])
                    if d.version == v
                    and d.path in in_files
                    and (d.qualname == qual or d.qualname.endswith("." + qual) or "." not in qual)
                ]
                if "." not in qual:
                    defs = [d for d in defs if d.qualname.rpartition(".")[2] == qual]
                if defs:
                    return "defined", defs
            hit = ix.mentioning(v, words, files)
            if hit and data.get("lives") and ix.holds_code(v, where) is False:
                shimmed.add(v)  # "`X` is defined in `p`", where p only re-exports X: not where X lives
                return None
            return ("mentioned", hit) if hit else None

        shimmed: set[str] = set()

        here = found(version)
        if not here and not any(ix.presence(where).values()):
            return "unchecked", f"{where} is in no indexed version (its own claim says so)", []
        if not here and not directory and not where.endswith(WORD_SUFFIXES) and not where.endswith(".py"):
            return (
                "unchecked",
                f"tpindex reads definitions of Python modules and identifiers of text files "
                f"({' '.join(WORD_SUFFIXES)}), not of {where}",
                [],
            )
        if here:
            how, what = here
            if how == "defined":
                d = what[0]
                more = f" and {len(what) - 1} more" if len(what) > 1 else ""
                return (
                    "ok",
                    f"defined at {d.path}:{d.line} ({d.kind} {d.qualname}){more}",
                    [_src(version, d.path, d.line)],
                )
            return (
                "ok",
                f"mentioned in {what[0]}" + (f" and {len(what) - 1} more" if len(what) > 1 else ""),
                [_src(version, what[0])],
            )
        tree_vs = ix.tree_versions()
        true_in = [v for v in tree_vs if v != version and found(v)]
        elsewhere, also = (
            self._defined_elsewhere(sym, version)
            if not data.get("grep")
            else self._mentioned_near(words, where, version)
        )
        if not directory and where not in ix.paths(version) and not ix.exists(version, where):
            last = [v for v, there in ix.presence(where).items() if there and self._before(v, version)]
            if last:
                return (
                    "stale",
                    f"{where}: {self._gone(ix.path_history(where), last[-1], version)}" + elsewhere,
                    [*also, _hist(where)],
                )
        earlier = [v for v in true_in if self._before(v, version)]
        if data.get("historical") and earlier:
            return "ok", f"in {where} in {_runs(true_in, self.versions)}", []
        if version in shimmed:
            elsewhere = (
                f"; only re-exported there at {version} by a shim with no class or function of its own"
                + elsewhere
            )
        if earlier:
            nxt = tree_vs[tree_vs.index(earlier[-1]) + 1]
            return (
                "stale",
                f"not in {where} since {nxt} (last at {earlier[-1]})" + elsewhere,
                [*also, _src(earlier[-1], where)],
            )
        if true_in:
            return "too-new", f"not in {where} at {version}; there from {true_in[0]}" + elsewhere, also
        never = f"`{sym}` is in {where} in no indexed --tree version ({_span(tree_vs)})" + elsewhere
        if data["pairing"] in ("sentence", "reference") or data.get("historical"):
            return "unchecked", never + "; the sentence may not pair them", also
        return "wrong", never, also

    def _by_tail(self, version: str, name: str) -> list[str]:
        """The paths of a version a bare name names: `cli_args.py` by its file name, `.../serve/api_utils.py`
        by the end of the path."""
        if name.startswith(".../"):
            tail = name[3:]
            return sorted(p for p in self.index.paths(version) if p.endswith(tail))
        return self.index.by_file_name(version, name)

    def _bare_file(self, name: str, version: str) -> str:
        """The path of a bare file name: the file at the top of the tree, else the one file of that name at the
        version, else in the --tree versions; "?reason" when it names none or several."""
        ix = self.index
        if any(name in ix.paths(v) for v in ix.tree_versions()):
            return name
        hits = self._by_tail(version, name) if ix.has_tree[version] else []
        if not hits:
            hits = sorted({h for v in ix.tree_versions() for h in self._by_tail(v, name)})
        if len(hits) == 1:
            return hits[0]
        if not hits:
            return f"?{name} is a bare file name that is in no file of an indexed --tree version"
        return (
            f"?{name} is a bare file name of {len(hits)} files ({', '.join(hits[:3])}"
            + (" ..." if len(hits) > 3 else "")
            + "): which one is meant cannot be told"
        )

    def _words(self, sym: str, data: dict) -> list[str] | str:
        """The identifiers a file must use for a mention; a reason (str) when the claim cannot be read."""
        if data.get("grep"):
            if PLACEHOLDER.search(sym) or re.search(r"<[^<>]*>", sym):
                return f"the grep pattern `{sym}` holds a placeholder, not checked"
            if not data.get("fixed") and re.search(r"[\\^$*+?()\[\]{}|]", sym.replace(r"\.", ".")):
                return f"the grep pattern `{sym}` is a regular expression, not checked"
            words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sym) if w not in KEYWORDS]
            return words or f"nothing to look for in {sym!r}"
        return [w for w in sym.split(".") if w]

    def _mentioned_near(self, words: list[str], where: str, version: str) -> tuple[str, list]:
        """For a grep: where the words are at this version instead (text and evidence): the files of the same
        directory that have them; else where the name is defined; else the modules of the tree using them."""
        folder = where.rstrip("/").rpartition("/")[0] if not where.endswith("/") else where.rstrip("/")
        ix = self.index
        hits = ix.mentioning(
            version, words, [f for f in ix.files_under(version, folder) if "/" not in f[len(folder) + 1 :]]
        )
        if not hits and len(words) == 1:
            text, evidence = self._defined_elsewhere(words[0], version)
            if evidence:
                return text, evidence
        if not hits:
            hits = ix.mentioning(version, words, [p for p in ix.paths(version) if p.endswith(".py")])
            if not hits:
                return f"; no file of {folder}/ nor any module has it at {version}", []
        return f"; at {version} in {_some(hits, 3)}", [_src(version, hits[0])]

    def _defined_elsewhere(self, sym: str, version: str) -> tuple[str, list]:
        """Where the symbol is defined at this version instead (text and evidence)."""
        name = sym.rpartition(".")[2]
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            return "", []
        defs = [
            d
            for d in self.index.defs(name)
            if d.version == version
            and (d.qualname == sym or d.qualname.endswith("." + sym) or "." not in sym)
        ]
        if not defs:
            return f"; not defined anywhere at {version}", []
        d: Def = defs[0]
        more = f" and {len(defs) - 1} more" if len(defs) > 1 else ""
        return f"; at {version} defined at {d.path}:{d.line}{more}", [_src(version, d.path, d.line)]

    # parser names
    def _parser(self, data: dict, version: str):
        name, kind = data["name"], data["kind"]
        if data.get("predicate") in ("absent", "gone"):  # "`x` is no longer registered"
            return self._not_there(data, version, {"type": "parser", "name": name, "kind": kind})
        rows = self.registered(version, name, kind)
        if rows and data.get("file"):
            return self._registered_from(data, version, rows)
        if rows:
            r = rows[0]
            return (
                "ok",
                f"registered ({r['kind']}, {r['impl']}: {r['real_file'] or '?'})",
                [
                    _parser(version, name),
                    *([_src(version, r["real_file"], r["real_line"])] if r["real_file"] else []),
                ],
            )
        other = self.registered(version, name)
        if other:
            return (
                "wrong",
                f"{name} is a {other[0]['kind']} parser at {version}, not a {kind} parser",
                [_parser(version, name)],
            )
        present = [v for v in self.versions if self.registered(v, name, kind)]
        if not present and data.get("sample"):
            return (
                "unchecked",
                "registered in no indexed version; the document's own code registers it (an example)",
                [],
            )
        if not present and data.get("plugin"):
            return (
                "unchecked",
                "registered in no indexed version; the document loads a parser plugin "
                "(--tool-parser-plugin), whose names tpindex cannot see",
                [],
            )
        if not present and data.get("historical"):
            return (
                "unchecked",
                f"the sentence speaks of the past, and no indexed version ({_span(self.versions)})"
                f" registers {name}",
                [],
            )
        if not present:
            names = sorted({n for v in self.versions for (_, n) in self.parser_map(v)})
            close = close_names(name, names, n=3, cutoff=0.6)
            return (
                "wrong",
                f"no {'' if kind == 'any' else kind + ' '}parser named {name} in any indexed version "
                f"({_span(self.versions)})" + (f"; close: {', '.join(close)}" if close else ""),
                [],
            )
        earlier = [v for v in present if self._before(v, version)]
        if data.get("historical") and earlier:
            return "ok", f"was registered in {_runs(present, self.versions)}", [_parser(earlier[-1], name)]
        if earlier:
            gone = self.versions[self.versions.index(earlier[-1]) + 1]
            return (
                "stale",
                f"not registered at {version}: removed at {gone} (last at {earlier[-1]})",
                [_parser(earlier[-1], name)],
            )
        return "too-new", f"not registered at {version}: first at {present[0]}", [_parser(present[0], name)]

    def _registered_from(self, data: dict, version: str, rows: list[dict]):
        """ "the `x` parser is registered from `f.py`": the file of the module the registry points the name at
        (or the registry's own file, "registered in `vllm/tool_parsers/__init__.py`")."""
        name, kind, file = data["name"], data["kind"], data["file"].rstrip("/")

        def names(path: str | None) -> bool:
            if not path:
                return False
            if data.get("bare"):
                return path.endswith(file[3:]) if file.startswith(".../") else path.rsplit("/", 1)[-1] == file
            return path == file or path.startswith(file + "/")

        def hits(rs: list[dict]) -> list[dict]:
            return [r for r in rs if names(r["reg_file"]) or names(r["registry_file"])]

        here = hits(rows)
        if here:
            r = here[0]
            return (
                "ok",
                f"registered from {r['reg_file']} ({r['kind']}; listed in {r['registry_file']})",
                [
                    _parser(version, name),
                    *([_src(version, r["reg_file"], r["reg_line"])] if r["reg_file"] else []),
                ],
            )
        real = [r for r in rows if names(r["real_file"])]
        if real:
            r = real[0]
            return (
                "unchecked",
                f"registered from {r['reg_file']}, whose class is defined in {r['real_file']}: "
                "which of the two the sentence means cannot be told",
                [_parser(version, name)],
            )
        if not any(r["reg_file"] for r in rows):
            return (
                "unchecked",
                f"{name} is registered at {version}, from a module tpindex could not resolve",
                [],
            )
        now = f"{name} is registered from {rows[0]['reg_file']} at {version}"
        when = [v for v in self.versions if hits(self.registered(v, name, kind))]
        earlier = [v for v in when if self._before(v, version)]
        if earlier and data.get("historical"):
            return (
                "ok",
                f"registered from {file} in {_runs(when, self.versions)}",
                [_parser(earlier[-1], name)],
            )
        if earlier:
            return "stale", f"{now}; from {file} in {_runs(when, self.versions)}", [_parser(version, name)]
        if when:
            return "too-new", f"{now}; from {file} from {when[0]}", [_parser(version, name)]
        return "wrong", f"{now}; from {file} in no indexed version", [_parser(version, name)]

    def _alias(self, data: dict, version: str):
        a, b, kind = data["a"], data["b"], data["kind"]

        def same(v: str) -> tuple[bool, list[dict], list[dict]]:
            ra, rb = self.registered(v, a, kind), self.registered(v, b, kind)
            hit = any(b in (r["alias_of"] or "").split(",") for r in ra) or any(
                a in (r["alias_of"] or "").split(",") for r in rb
            )
            return hit, ra, rb

        ok, ra, rb = same(version)
        if ok:
            return (
                "ok",
                f"both registered to {ra[0]['real_class'] or 'one class'} at {version}",
                [_parser(version, a), _parser(version, b)],
            )
        when = [v for v in self.versions if same(v)[0]]
        missing = [n for n, r in ((a, ra), (b, rb)) if not r]
        now = (
            f"{' and '.join(missing)} not registered at {version}"
            if missing
            else f"{a} -> {ra[0]['real_class']} ({ra[0]['real_file']}), {b} -> {rb[0]['real_class']} ({rb[0]['real_file']})"
        )
        if not when:
            return (
                "wrong",
                f"never the same class in an indexed version; {now}",
                [_parser(version, n) for n, r in ((a, ra), (b, rb)) if r],
            )
        status = "stale" if any(self._before(v, version) for v in when) else "too-new"
        return (
            status,
            f"the same class in {_runs(when, self.versions)}, not at {version}: {now}",
            [_parser(when[-1], a)],
        )

    # counts
    def _count(self, data: dict, version: str):
        n, at = data["n"], data.get("version")
        if at and at not in self.versions:
            return "unchecked", f"{at} is not indexed", []
        target = at or version  # a count said "at vX" is about vX, whatever version is checked
        got = self.count(data, target)
        if got is None:
            return "unchecked", f"{target} was indexed without --tree", []
        if got == n:
            return "ok", f"{got} at {target}", []
        if at:
            return "wrong", f"{got} at {at}, not {n}", []
        held = [v for v in self.versions if self.count(data, v) == n]
        if held:
            status = "stale" if any(self._before(v, version) for v in held) else "too-new"
            return status, f"{got} at {version}; {n} in {_runs(held, self.versions)}", []
        return "wrong", f"{got} at {version}; {n} in no indexed version", []

    def count(self, data: dict, version: str) -> int | None:
        key = (
            data["what"],
            data.get("kind"),
            data.get("impl"),
            data.get("tool_only"),
            data.get("path"),
            version,
        )
        if key not in self._counts:
            self._counts[key] = self._compute(data, version)
        return self._counts[key]

    def _compute(self, data: dict, version: str) -> int | None:
        what = data["what"]
        if what == "names":
            return sum(1 for (k, _) in self.parser_map(version) if k == data["kind"])
        if what == "impl":
            return sum(
                1
                for (k, _), r in self.parser_map(version).items()
                if k == "tool" and r["impl"] == data["impl"]
            )
        if what == "adapter-files":
            sql = "select count(distinct file) from adapter_imports where version = ?"
            if data.get("tool_only"):
                sql += " and role = 'tool' and file like '%tool_parsers/%'"
            return self.db.execute(sql, [version]).fetchone()[0]
        if what == "files-under":
            path = data["path"]
            if not self.index.knows(version, path.rstrip("/") + "/x"):
                return None
            return len(self.index.files_under(version, path))
        raise AssertionError(what)

    # version claims
    def _version(self, data: dict, version: str):
        if data.get("predicate"):
            return (
                "unchecked",
                f'the version phrase may be about "{data["predicate"]}", not about the name or path '
                "being there; tpindex does not check that by version",
                [],
            )
        subject, claimed = data["subject"], data["version"]
        code = data.get("about") == "code"  # "the parsers lived in `p`": where code is, not a shim
        pres, what = self._presence(subject, code=code)
        if pres is None:
            return "unchecked", what, []
        known = [(v, p) for v in self.versions if (p := pres(v)) is not None]
        if not known:
            return "unchecked", f"no indexed version can tell ({what})", []
        have = [v for v, p in known if p]
        cv = parse_version(claimed)
        if cv is None:
            return "unchecked", f"{claimed} is not a version", []

        def before(v):
            return parse_version(v) < cv

        phrase = data["phrase"]
        indexed = claimed in self.versions
        evidence = (
            [_hist(subject["path"])]
            if subject["type"] == "path"
            else [_parser(version, subject["name"])]
            if subject["type"] == "parser"
            else []
        )
        if phrase == "since":
            early = [v for v in have if before(v)]
            if early:
                return "wrong", f"already at {early[0]} (first indexed version with it); {what}", evidence
            after = [(v, p) for v, p in known if not before(v)]
            first = next((v for v, p in after if p), None)
            if first is None:
                return "wrong", f"in no indexed version from {claimed} on ({what})", evidence
            gap = [v for v, p in after if not p and parse_version(v) < parse_version(first)]
            if gap:
                return "wrong", f"not at {gap[0]}; first at {first}", evidence
            if self._before(claimed, version) or claimed == version:
                if not (pres(version) if pres(version) is not None else True):
                    last = [v for v in have if self._before(v, version)][-1]
                    nxt = self.versions[self.versions.index(last) + 1]
                    return "stale", f"added at {first}, but gone at {version} (removed at {nxt})", evidence
            prev = [v for v, _ in known if before(v)]
            if indexed and first == claimed and prev:
                return "ok", f"first at {claimed} (absent at {prev[-1]})", evidence
            if not prev:
                return (
                    "unchecked",
                    f"consistent (present from {first}), but no version before {claimed} is "
                    "indexed to confirm it was absent",
                    evidence,
                )
            return (
                "unchecked",
                f"consistent (absent at {prev[-1]}, present at {first}), but {claimed} itself is not indexed",
                evidence,
            )
        if phrase in ("removed", "before", "moved"):
            late = [v for v in have if not before(v)]
            if late:
                gone = _first_absent_after(known, late[-1])
                return (
                    "wrong",
                    f"still present at {late[0]}"
                    + (f"; removed at {gone}" if gone else " and in every later indexed version"),
                    evidence,
                )
            early = [v for v, p in known if before(v)]
            if not [v for v in have if before(v)]:
                return (
                    "unchecked",
                    f"in no indexed version before {claimed} ({what}); cannot confirm",
                    evidence,
                )
            last = [v for v in have if before(v)][-1]
            gone = _first_absent_after(known, last)
            if gone is not None and parse_version(gone) < cv and phrase != "before":
                return "wrong", f"removed at {gone} (last at {last}), before {claimed}", evidence
            if phrase == "before":
                if code and gone and self.index.exists(gone, subject["path"]):
                    return (
                        "ok",
                        f"code there last at {last}; from {gone} on only a shim with no class or function of its own",
                        evidence,
                    )
                return "ok", f"last at {last}, absent from {gone or claimed} on", evidence
            if not indexed or early[-1] != last:
                return (
                    "unchecked",
                    f"consistent (last at {last}, absent at {gone}), but {claimed} is not indexed",
                    evidence,
                )
            if phrase == "moved":
                return self._moved(subject, last, claimed, data.get("to"), evidence, version)
            return "ok", f"removed at {claimed} (last at {last})", evidence
        if phrase == "until":
            if not [v for v in have if not before(v) or v == claimed]:
                return "wrong", f"not at {claimed}" + (f"; last at {have[-1]}" if have else ""), evidence
            later = [v for v in have if parse_version(v) > cv]
            if later:
                return "wrong", f"still present at {later[0]}", evidence
            return "ok", f"last at {claimed}", evidence
        return "unchecked", f"cannot check {phrase!r}", []

    def _moved(
        self, subject: dict, last: str, at: str, to: str | None, evidence: list, version: str | None = None
    ):
        if subject["type"] == "path":
            moves = self.index.successors(last, at, subject["path"])
            if not moves:
                return (
                    "wrong",
                    f"removed at {at}, not moved: no new file holds its content or its definitions",
                    evidence,
                )
            if to and to.rstrip("/") not in {m.to for m in moves}:
                return "wrong", f"moved at {at} to {moves[0].to}, not to {to}", evidence
            m = next((m for m in moves if to and m.to == to.rstrip("/")), moves[0])
            now = ""
            if version is not None and self._before(at, version):
                chain = self.index.onward(m.to, at, version)
                if chain.removed_at:
                    now = f"; then removed at {chain.removed_at}"
                elif chain.hops:
                    now = (
                        f"; now at {chain.final(m)} ("
                        + ", then ".join(f"at {h.at} to {h.move.describe()}" for h in chain.hops)
                        + ")"
                    )
            return "ok", f"moved at {at} to {m.describe()}{now}", evidence
        return "ok", f"gone from its file at {at} (last at {last})", evidence

    def _presence(self, subject: dict, code: bool = False):
        """(version -> True / False / None (cannot tell), description) for a claim's subject; `code`: a path
        counts where it holds code of its own (TreeIndex.holds_code), not where it is only a shim."""
        ix = self.index
        if subject["type"] == "path":
            path = subject["path"]
            if code and not subject.get("bare") and not PLACEHOLDER.search(path) and "*" not in path:

                def code_at(v: str) -> bool | None:
                    there = ix.presence(path).get(v)
                    held = ix.holds_code(v, path) if there else None
                    return there if held is None else held

                return code_at, f"code in {path}"
            if subject.get("bare") and not any(path in ix.paths(v) for v in ix.tree_versions()):
                return (
                    lambda v: bool(self._by_tail(v, path)) if ix.has_tree[v] else None
                ), f"file name {path}"
            if PLACEHOLDER.search(path) or "*" in path:
                glob = to_glob(path)
                return (lambda v: bool(ix.glob(v, glob)) if ix.has_tree[v] else None), f"pattern {path}"
            return (lambda v: ix.presence(path).get(v)), f"path {path}"
        name = subject["name"]
        kind = subject.get("kind", "any")
        if subject["type"] == "parser" or any(self.registered(v, name) for v in self.versions):
            return (lambda v: bool(self.registered(v, name, kind))), f"parser name {name}"
        simple = name.rpartition(".")[2]
        where = subject.get("file")
        if not where and not re.search(r"[_.A-Z]", name):
            return None, f"`{name}` is a plain word, not clearly a symbol or a parser name"
        defs = [d for d in ix.defs(simple) if d.qualname == name or d.qualname.endswith("." + name)]
        if where and _bare(where):
            where = self._bare_file(where, self.versions[-1])
            if where.startswith("?"):
                return None, where[1:]
        if where:

            def in_file(v: str) -> bool | None:
                if not ix.has_tree[v]:
                    return None
                if any(
                    d.version == v and (d.path == where or d.path.startswith(where.rstrip("/") + "/"))
                    for d in defs
                ):
                    return True
                return all(ix.mentioned_in(v, w, where) for w in name.split("."))

            return in_file, f"{name} in {where}"
        if defs:
            have = {d.version for d in defs}
            return (lambda v: (v in have) if ix.has_tree[v] else None), f"symbol {name}"
        return None, f"`{name}` is neither a parser name nor a symbol defined in any indexed --tree version"

    def _before(self, a: str, b: str) -> bool:
        """Version order; indexed versions by their order in the database, others by PEP 440."""
        if a in self.versions and b in self.versions:
            return self.versions.index(a) < self.versions.index(b)
        return sort_key(a) < sort_key(b)


def _bare(path: str) -> bool:
    """A file name without its directory (`cli_args.py`) or with only the end of it (`.../serve/api_utils.py`)."""
    return "/" not in path or path.startswith(".../")


def _some(paths: list[str], n: int = 2) -> str:
    """ "a.py, b.py and 3 more" """
    return ", ".join(paths[:n]) + (f" and {len(paths) - n} more" if len(paths) > n else "")


def _first_absent_after(known: list[tuple[str, bool]], last: str) -> str | None:
    seen = False
    for v, p in known:
        if v == last:
            seen = True
        elif seen and not p:
            return v
    return None


def _src(version: str, path: str, line: int | None = None) -> SourceEvidence:
    return SourceEvidence(type="source", version=version, file=path, line=line)


def _parser(version: str, name: str) -> ParserEvidence:
    return ParserEvidence(type="parser", version=version, name=name)


def _hist(path: str) -> PathEvidence:
    return PathEvidence(type="path", path=path)


# -- the document -------------------------------------------------------------------------------------------


def resolve_versions(db, specs: list[str] | tuple[str, ...]) -> list[str]:
    """--at values (each a version or a spec: A..B, lists, globs) -> indexed versions, in order."""
    from ..core.specs import SpecError, select
    from .versions import indexed, newest

    if not specs:
        return [newest(db)]
    labels = indexed(db)
    out: list[str] = []
    for s in specs:
        if ".." in s or "," in s or any(c in s for c in "*?["):
            try:
                out.extend(select(s, labels).names)
            except SpecError as e:
                raise AnswerError(str(e), "tpindex versions lists what is indexed") from None
        else:
            out.append(require(db, s))
    order = {v: i for i, v in enumerate(labels)}
    return sorted(dict.fromkeys(out), key=order.get)


def check_document(db, text: str, versions: list[str], name: str = "document") -> CheckDoc:
    checker = Checker(db)
    try:
        claims = read(text, checker.knowledge(), limit=MAX_CLAIMS)  # stops reading past the cap
    except TooManyClaims as e:
        raise AnswerError(
            f"{name} makes more than {MAX_CLAIMS} claims (reading stopped at line {e.line}); at most "
            f"{MAX_CLAIMS} are checked at once, and none was",
            f"split the document before line {e.line} and check the parts one by one",
        ) from None
    checked = []
    for v in versions:
        results = [checker.check(c, v) for c in claims]
        counts = {s: sum(1 for r in results if r.status == s) for s in STATUSES}
        checked.append(VersionCheck(version=v, counts=counts, results=results))
    failed = any(r.counts["stale"] or r.counts["too-new"] or r.counts["wrong"] for r in checked)
    return CheckDoc(document=name, claims=len(claims), versions=checked, failed=failed)
