"""Indexed versions: lookup with suggestions for names that are not indexed."""

from __future__ import annotations

from ..problems import Problem


class AnswerError(Problem):
    """A question the database cannot answer as asked; `hint` says what to ask instead."""


def indexed(db) -> list[str]:
    return [r[0] for r in db.execute("select label from versions where status = 'complete' order by ord")]


def newest(db) -> str:
    labels = indexed(db)
    if not labels:
        raise AnswerError("the database holds no indexed version", "build one: tpindex build --tags ...")
    return labels[-1]


def require(db, label: str) -> str:
    labels = indexed(db)
    if label in labels:
        return label
    if not label.startswith("v") and f"v{label}" in labels:
        return f"v{label}"
    from ..specs import closest

    near = ", ".join(closest(label, labels)) or "none"
    raise AnswerError(f"version {label} is not indexed; closest indexed: {near}",
                      f"index it first: tpindex build --tags {label}  (tpindex versions lists what is indexed)")
