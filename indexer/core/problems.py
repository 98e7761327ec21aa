"""The one kind of error a user can fix: what is wrong, and what to do about it.

Stages raise their own subclass (StoreError, BuildError, AnswerError); the command line turns any of them
into a one-line message, a `Hint:` line and exit status 2, in one place (cli/main.py LazyGroup.invoke).
"""

from __future__ import annotations


class Problem(Exception):
    """`message` says what is wrong, `hint` what to do; str() is "message; hint"."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message + (f"; {hint}" if hint else ""))
        self.message, self.hint = message, hint


class BuildError(Problem):
    """A build that cannot start."""
