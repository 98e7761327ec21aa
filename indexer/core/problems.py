"""The one kind of error a user can fix: what is wrong, and what to do about it.

Stages raise their own subclass where they find what is wrong (SpecError, ScopeError; the sources' SourceError,
NotARepository, NotAVllmTree; StoreError, BuildError, AnswerError), each with its hint. Each surface translates
them in one place: the command line into a one-line message, a `Hint:` line and exit status 2
(cli/main.py LazyGroup.invoke), the web into one error page (serve/plugin.py handle_exception), MCP into a
tool error (mcp/tools.py problem_as_tool_error).
"""

from __future__ import annotations


class Problem(Exception):
    """`message` says what is wrong, `hint` what to do; str() is "message; hint". `transient`: what the load
    of the moment decided (a time or memory limit reached, a server busy), not the answer to what was asked:
    a surface that keeps answers (serve's response cache) never keeps one of these."""

    transient = False

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message + (f"; {hint}" if hint else ""))
        self.message, self.hint = message, hint

    def __reduce__(self):
        """Pickled whole, whatever its subclass takes (a child process raises it, its parent raises it again:
        core/bounded.py): its class, message, hint and attributes."""
        return _rebuilt, (type(self), self.message, self.hint, dict(self.__dict__))


def _rebuilt(cls, message, hint, state):
    e = cls.__new__(cls)
    Exception.__init__(e, message + (f"; {hint}" if hint else ""))
    e.__dict__.update(state)
    e.message, e.hint = message, hint
    return e


class BuildError(Problem):
    """A build that cannot start."""
