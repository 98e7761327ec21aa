"""Links from a row's file and line to that line upstream, at the row's version.

A column is a file column when its name ends in `file` or `path`, optionally followed by `_a` / `_b`
(the two sides of a comparison). Its version is the row's `version` column (or `last_version`; for
`_a` / `_b`, the `a` / `b` column), and its line the column named like it with `line` for `file`/`path`:
file -> line, reg_file -> reg_line, real_file_a -> real_line_a. Without a line column the link goes to
the file.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

DEFAULT_UPSTREAM = "https://github.com/vllm-project/vllm"
PLACEHOLDERS = ("ref", "path", "line")
UPSTREAM_HINT = (
    "pass a repository URL such as https://github.com/vllm-project/vllm, or a template using only"
    " {ref}, {path} and {line}, e.g. https://git.example.org/vllm/src/{ref}/{path}#L{line}"
)

_FILE_COLUMN = re.compile(r"^(?P<prefix>.*?)(?P<what>file|path)(?P<side>_a|_b)?$")
_VERSION_TAG = re.compile(r"^v?\d+(\.\d+)+")


def link_columns(column: str, keys) -> tuple[str, str | None] | None:
    """(version column, line column or None) for a file column of a row with these keys, else None."""
    m = _FILE_COLUMN.match(column)
    if not m:
        return None
    keys = set(keys)
    side = m.group("side")
    if side:
        candidates = (side[1:], f"version{side}")
    else:
        candidates = ("version", "last_version")
    version = next((c for c in candidates if c in keys), None)
    if version is None:
        return None
    line = f"{m.group('prefix')}line{side or ''}"
    return version, (line if line in keys else None)


def diff_columns(column: str, keys) -> tuple[str, str, str, str] | None:
    """For a file column of a comparison (real_file_a, real_file_b in a row with a and b columns):
    (a column, b column, a-side file column, b-side file column), else None. The `_b` cell carries the
    diff link, or the `_a` cell when the row has no `_b` file (a removed name)."""
    m = _FILE_COLUMN.match(column)
    if not m or not m.group("side"):
        return None
    stem = m.group("prefix") + m.group("what")
    cols = ("a", "b", f"{stem}_a", f"{stem}_b")
    return cols if all(c in set(keys) for c in cols) else None


def upstream_problem(url: str) -> str | None:
    """What is wrong with an upstream URL or template (None when it is fine): links are http(s) only, and
    a template uses only {ref}, {path} and {line}."""
    url = url.strip()
    if not url:
        return "--upstream is empty"
    try:
        parts = urlsplit(url)
    except ValueError as e:
        return f"--upstream {url!r} is not a URL ({e})"
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return f"--upstream {url!r} is not an http(s) URL"
    if "{" not in url and "}" not in url:
        return None
    import string  # here: only a template is parsed (GitHub's URLs are not)

    try:
        fields = list(string.Formatter().parse(url))
    except ValueError as e:
        return f"--upstream {url!r} is a malformed template ({e})"
    for _, name, spec, conversion in fields:
        if name is not None and (name not in PLACEHOLDERS or spec or conversion):
            return f"--upstream {url!r} uses {{{name}}}, which is not one of {{ref}}, {{path}}, {{line}}"
    return None


def normalize_upstream(url: str) -> str:
    url = url.strip()
    if "{" in url:
        return url
    url = url.rstrip("/")
    return url[:-4] if url.endswith(".git") else url


def _linkable(upstream: str | None) -> bool:
    """The one check every link built from the upstream passes: an http(s) URL or template (none: no link)."""
    return upstream is not None and upstream_problem(upstream) is None


def source_url(upstream: str | None, ref: str, path: str, line: int | None = None) -> str | None:
    """The upstream URL of a file (and line) at a ref. An upstream containing `{ref}`, `{path}` and
    `{line}` is a template (for hosts other than GitHub); otherwise GitHub's /blob/ layout. None (no link)
    for no upstream, or one that is not a valid http(s) URL or template."""
    if not _linkable(upstream):
        return None
    has_line = isinstance(line, int) and line > 0
    if "{" in upstream:
        url = upstream.format(ref=quote(ref, safe=""), path=quote(path), line=line if has_line else "")
        return url if has_line else url.removesuffix("#L")
    return f"{upstream}/blob/{quote(ref, safe='')}/{quote(path)}" + (f"#L{line}" if has_line else "")


def ref_for(label: str, source: str | None, commit: str | None) -> str:
    """The upstream ref of a version: its label for release versions (tags upstream, whichever source
    indexed them), the commit for another git ref (a branch moves)."""
    if source == "git" and commit and not _VERSION_TAG.match(label):
        return commit
    return label


def compare_url(upstream: str | None, ref_a: str, ref_b: str, path: str | None = None) -> str | None:
    """GitHub's compare view of two refs (at one file's diff when `path` is given); None for an upstream
    template (other hosts have no common compare layout), for none, and for one that is not valid."""
    if not _linkable(upstream) or "{" in upstream:
        return None
    import hashlib

    url = f"{upstream}/compare/{quote(ref_a, safe='')}...{quote(ref_b, safe='')}"
    return url + (f"#diff-{hashlib.sha256(path.encode()).hexdigest()}" if path else "")


def commit_url(upstream: str | None, sha: str) -> str | None:
    """GitHub's page of a commit; None for an upstream template, for none, and for one that is not valid."""
    if not _linkable(upstream) or "{" in upstream:
        return None
    return f"{upstream}/commit/{quote(sha, safe='')}"


def pull_url(upstream: str | None, number: int | None) -> str | None:
    """GitHub's page of a pull request; None for an upstream template, for none, for one that is not valid,
    or no number."""
    if not _linkable(upstream) or "{" in upstream or number is None:
        return None
    return f"{upstream}/pull/{int(number)}"
