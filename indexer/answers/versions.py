"""Indexed versions: lookup, the nearest indexed versions in version order for one that is not indexed, and
a build command that would index it, as written (the source the database was built from, its --db)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.problems import Problem

if TYPE_CHECKING:
    from .model import VersionInfo


class AnswerError(Problem):
    """A question the database cannot answer as asked; `hint` says what to ask instead. A surface that can
    offer choices (the browser's links) reads `asked` (the version asked for) and `versions` (indexed versions
    to ask instead), `asked_path` and `paths` (paths to ask instead), `names` (parser names to ask instead)."""

    asked: str | None = None
    versions: tuple[str, ...] = ()
    asked_path: str | None = None
    paths: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def offering(
        self, asked: str | None = None, versions=(), asked_path: str | None = None, paths=(), names=()
    ) -> AnswerError:
        self.asked, self.versions, self.asked_path = asked, tuple(versions), asked_path
        self.paths, self.names = tuple(paths), tuple(names)
        return self


def upstream_refs(db, labels: list[str] | None = None) -> tuple[str | None, dict[str, str]]:
    """The upstream links use (normalized): the reader's `upstream_override` when it has one (serve
    --upstream), else the stored one, else vLLM's; None (no links) when it is not a valid http(s) URL or
    template (a database written by hand or by an older tpindex). And the ref that upstream links use for
    each version (every version, or those of `labels`)."""
    from ..core.links import DEFAULT_UPSTREAM, normalize_upstream, ref_for, upstream_problem

    upstream = getattr(db, "upstream_override", False)
    if upstream is False:
        row = db.execute("select value from meta where key = 'upstream'").fetchone()
        upstream = str(row[0]) if row and row[0] else DEFAULT_UPSTREAM
    upstream = None if upstream is None or upstream_problem(upstream) else normalize_upstream(upstream)
    sql, params = "select label, source, commit_id from versions", list(labels or [])
    if labels is not None:
        sql += f" where label in ({', '.join('?' * len(params))})"
    return upstream, {
        label: ref_for(label, source, commit) for label, source, commit in db.execute(sql, params)
    }


def indexed(db) -> list[str]:
    return [r[0] for r in db.execute("select label from versions where status = 'complete' order by ord")]


def newest(db) -> str:
    labels = indexed(db)
    if not labels:
        raise AnswerError("the database holds no indexed version", build_hint(db, "v0.30.0..v0.32.0"))
    return labels[-1]


def nearest(label: str, labels: list[str], n: int = 3) -> list[str]:
    """The indexed versions closest to `label` in version order (the one below, the one above, ...; a label no
    version equals, so none is left out as equal)."""
    from ..core.specs import nearest_versions
    from ..core.suggest import close_names

    return nearest_versions(label, labels, n) or close_names(label, labels, n=n, cutoff=0.4) or labels[-n:]


def _newest_source(db) -> tuple[str, str | None]:
    """(source, origin) of the database's newest build."""
    row = (
        db.execute(
            "select source, origin from versions order by indexed_at desc, ord desc limit 1"
        ).fetchone()
        if _has_origin(db)
        else None
    )
    return row or ("pypi", None)


def listing(db) -> dict | None:
    """What the source of the newest build listed when it ran (stored by the build): its `names` (releases
    with a source archive, or tags) and, for the package index, the versions `without_archive` (wheels only).
    None for a database built before tpindex stored it, or from a directory."""
    import json

    source, _ = _newest_source(db)
    row = db.execute("select value from meta where key = ?", [f"listing:{source}"]).fetchone()
    try:
        return json.loads(row[0]) if row else None
    except ValueError:
        return None


def build_hint(db, spec: str) -> str:
    """`tpindex build ... --tags SPEC --db DB` from the source the database's newest build used."""
    return "index it first: " + build_command(db, spec)


def versions_command(db) -> str:
    import shlex

    path = getattr(db, "path", None)
    return "tpindex versions" + (f" --db {shlex.quote(str(path))}" if path else "")


def build_command(db, spec: str) -> str:
    import shlex

    source, origin = _newest_source(db)
    where = {"git": f"--repo {shlex.quote(origin)}" if origin else "--repo PATH/TO/vllm"}.get(
        source, "--from-pypi"
    )
    path = getattr(db, "path", None)
    dbarg = f" --db {shlex.quote(str(path))}" if path else ""
    return f"tpindex build {where} --tags {shlex.quote(spec)}{dbarg}"


def _has_origin(db) -> bool:
    return any(r[1] == "origin" for r in db.execute("pragma table_info(versions)"))


def resolve(label: str, labels: list[str], hint: str | None = None) -> str:
    """The one resolver of a version asked for (every command's --at, A and B, the browser's ?v=, a= and b=,
    the canned questions, MCP arguments): the indexed label written so, else the one indexed version equal to
    it under PEP 440 (`v0.31` is v0.31.0); several equal ones are ambiguous, none is not indexed (with the
    nearest indexed versions in version order, and `hint`)."""
    from ..core.specs import ambiguous, named

    found = named(label, labels)
    if len(found) == 1:
        return found[0]
    if found:
        raise AnswerError(ambiguous(label, found), "tpindex versions lists them")
    close = nearest(label.strip(), labels)
    raise AnswerError(
        f"version {label.strip()} is not indexed; nearest indexed: {', '.join(close) or 'none'}",
        hint or "tpindex versions lists what is indexed",
    ).offering(label.strip(), close)


def require(db, label: str) -> str:
    if not label.strip():  # an empty argument ('' from a script's unset variable): no build could index it
        raise AnswerError(
            "the version label is empty", "name an indexed version (tpindex versions lists them)"
        )
    from ..core.specs import named

    labels = indexed(db)
    if len(named(label, labels)) == 1:
        return resolve(label, labels)
    try:
        return resolve(
            label, labels, build_hint(db, label.strip()) + "  (tpindex versions lists what is indexed)"
        )
    except AnswerError as e:
        raise _unreleased(db, label.strip(), labels, e) from None


def _unreleased(db, label: str, labels: list[str], e: AnswerError) -> AnswerError:
    """A version not indexed, told against what the source listed when the database was built: one it has is
    offered to index as written; one it has no release of (no source archive: vllm 0.15.x) says so, and offers
    the nearest indexed versions, or the build of the nearest releases when those are not indexed."""
    from ..core.specs import closest, named, parse_version

    listed = listing(db)
    if not listed or parse_version(label) is None or len(found := named(label, listed["names"])) > 1:
        return e
    if found:
        if found[0] != label:  # the source's own spelling of it (0.25 -> v0.25.0)
            return AnswerError(
                e.message, build_hint(db, found[0]) + "  (tpindex versions lists what is indexed)"
            ).offering(e.asked, e.versions)
        return e
    shown = f"v{label[1:] if label[:1] in 'vV' else label}"
    why = (
        f"vllm {shown} has wheels but no source archive on {listed['origin']}, so no build can index it"
        if named(label, listed.get("without_archive", []))
        else f"{listed['origin']} has no release {shown}"
    )
    beside = [n for n in closest(label, listed["names"]) if n not in labels]
    hint = (
        f"index the releases beside it instead: {build_command(db, ','.join(beside))}"
        if beside
        else f"ask one of the nearest indexed versions with --at; all are listed by: {versions_command(db)}"
    )
    return AnswerError(f"{e.message}; {why}", hint).offering(e.asked, e.versions)


def sql_resolver(conn) -> None:
    """`tpindex_version(label)` in SQL (the canned questions): the indexed version `resolve` gives, or null."""
    from ..core.specs import named

    def version(label):
        if label is None or not str(label).strip():
            return None
        found = named(
            str(label),
            [r[0] for r in conn.execute("select label from versions where status = 'complete' order by ord")],
        )
        return found[0] if len(found) == 1 else None

    conn.create_function("tpindex_version", 1, version)


def version_infos(db) -> list[VersionInfo]:
    from .model import VersionInfo  # here: `where` reads versions without the answers' data classes

    origin = "v.origin" if _has_origin(db) else "null"
    rows = db.execute(f"""
        select v.label, v.source, {origin}, v.status, v.file_count,
          (select count(distinct name) from registry r where r.version = v.label and r.kind = 'tool'),
          (select count(distinct name) from registry r where r.version = v.label and r.kind = 'reasoning'),
          (select count(distinct name) from registry r where r.version = v.label and r.kind = 'engine')
        from versions v order by v.ord""").fetchall()
    return [
        VersionInfo(
            version=label,
            source=source,
            origin=orig,
            files=files or 0,
            tool=tool,
            reasoning=reasoning,
            engine=engine,
            status=status,
        )
        for label, source, orig, status, files, tool, reasoning, engine in rows
    ]
