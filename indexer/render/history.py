"""The text and Markdown of `log` and `contains` (and a commit's Markdown, for diff's table)."""

from __future__ import annotations

from ..answers.commit_model import Commit, CommitFile
from ..answers.history_model import Contains, Log
from ..answers.which import span_text, spans


def _day(date: str) -> str:
    return date[:10]


def _files_text(files: list[CommitFile]) -> str:
    from .text import printable

    return printable(
        ", ".join(
            f"{f.file} +{f.added} -{f.removed}" if f.added is not None else f"{f.file} (binary)"
            for f in files
        ),
        styles=False,
    )


def _commit_line(c: Commit) -> str:
    from .text import printable  # a subject is the repository's: no colour of its own reaches the terminal

    return f"{c.sha[:10]}  {_day(c.date)}  {printable(c.subject, styles=False)}" + (
        " (merge)" if c.merge else ""
    )


def format_log(ans: Log, width: int | None = None) -> list[str]:
    from . import text as textfmt

    lines: list[str] = []
    what = "its code and the shared framework files" if ans.framework else "its code"
    mode = "first parent" if ans.first_parent else "all parents"
    for k in ans.kinds:
        if lines:
            lines.append("")
        n = len(k.commits)
        if n:
            lines.append(
                f"{ans.name} ({k.kind} parser): {n} commit{'s' if n != 1 else ''} from {ans.a} to {ans.b}"
                f" ({mode}) touching {what}"
            )
        else:
            lines.append(
                f"{ans.name} ({k.kind} parser): no commit from {ans.a} to {ans.b} touched {what} ({mode})"
            )
        for v, files, registered in ((ans.a, k.files_a, k.registered_a), (ans.b, k.files_b, k.registered_b)):
            shown = (
                (
                    "the same"
                    if v == ans.b and files == k.files_a and k.registered_a
                    else ", ".join(files) or "none"
                )
                if registered
                else "none (not registered there)"
            )
            lines += textfmt.hanging(f"  files at {v}: ", shown, width)
        for c in k.commits:
            lines += textfmt.hanging("", _commit_line(c), width, indent=24)
            lines += textfmt.hanging(" " * 24, _files_text(c.files), width)
    if ans.note:
        lines += ["", f"note: {ans.note}"]
    return lines


def _md(s) -> str:
    from .text import printable

    return "" if s is None else printable(str(s), styles=False).replace("|", "\\|").replace("\n", " ")


def md_commit(c: Commit) -> str:
    sha = f"[{c.sha[:10]}]({c.url})" if c.url else f"`{c.sha[:10]}`"
    pr = f" [#{c.pr}]({c.pr_url})" if c.pr and c.pr_url else ""
    return f"{sha}{pr} {_md(c.subject)}"


def format_log_markdown(ans: Log) -> str:
    lines = []
    for k in ans.kinds:
        lines += [
            f"## {ans.name} ({k.kind} parser): commits from {ans.a} to {ans.b}",
            "",
            f"Files at {ans.a}: {', '.join(f'`{f}`' for f in k.files_a) or 'none'}; at {ans.b}:"
            f" {', '.join(f'`{f}`' for f in k.files_b) or 'none'}"
            f" ({'first parent' if ans.first_parent else 'all parents'}).",
            "",
        ]
        if not k.commits:
            lines += ["No commit touched them.", ""]
            continue
        lines += ["| commit | date | subject | PR | files |", "|---|---|---|---|---|"]
        for c in k.commits:
            sha = f"[{c.sha[:10]}]({c.url})" if c.url else f"`{c.sha[:10]}`"
            pr = (f"[#{c.pr}]({c.pr_url})" if c.pr_url else f"#{c.pr}") if c.pr else ""
            files = "<br>".join(
                f"`{f.file}` +{f.added} -{f.removed}" if f.added is not None else f"`{f.file}` binary"
                for f in c.files
            )
            lines.append(f"| {sha} | {_day(c.date)} | {_md(c.subject)} | {pr} | {files} |")
        lines.append("")
    if ans.note:
        lines.append(f"Note: {ans.note}")
    return "\n".join(lines).rstrip("\n") + "\n"


def format_contains(ans: Contains, all_versions: list[str], width: int | None = None) -> list[str]:
    from . import text as textfmt

    def ranges(labels):
        return span_text(spans(all_versions, set(labels)))

    q = ans.query
    if ans.first:
        n = len(ans.commits)
        head = [
            f"{q}: first in {ans.first}; in {ranges(ans.versions)}" + (f" ({n} commits)" if n > 1 else "")
        ]
    elif ans.commits:
        head = [
            f"{q}: in no indexed version (its commit is in the history of none of {ranges(ans.not_containing)})"
        ]
    else:
        what = f"no commit names {q} in its subject" if q.startswith("#") else f"no commit {q}"
        head = [f"{q}: in no indexed version ({what} in the history of {ranges(ans.not_containing)})"]
    lines = head
    for f in ans.commits:
        lines += textfmt.hanging("  ", _commit_line(f.commit), width, indent=26)
        if len(ans.commits) > 1:
            lines.append(
                " " * 26
                + (f"first in {f.first}; in {ranges(f.versions)}" if f.first else "in no indexed version")
            )
    if ans.first and ans.not_containing:
        lines.append(f"not in: {ranges(ans.not_containing)}")
    if ans.without_history:
        lines.append(f"cannot tell (no commits stored): {', '.join(ans.without_history)}")
    return lines
