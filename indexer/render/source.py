"""The text of `show` and `diff --code`: numbered lines, syntax colour (Pygments: ANSI on a terminal, HTML
spans for the browser's pages), unified diffs."""

from __future__ import annotations


def format_show(s, whole: list[str] | None = None) -> list[str]:
    """The lines of a `Shown` with their numbers; syntax-coloured when `whole` (every line of the file, the
    lexer's context) is given."""
    if s.kind == "binary":
        return [f"{s.path} at {s.version}: binary file, {s.size} bytes (not shown)"]
    texts = [r.text for r in s.lines]
    color = whole is not None
    if color:
        texts = highlight(whole, s.path, "terminal")[s.start - 1 : s.end]
    width = len(str(s.end))
    out = []
    for r, text in zip(s.lines, texts, strict=True):
        number = str(r.line).rjust(width)
        out.append(f"{_dim(number) if color else number}  {text}")
    return out


def _dim(s: str) -> str:
    return f"\x1b[2m{s}\x1b[0m"


def highlight(lines: list[str], path: str, fmt: str) -> list[str]:
    """Each line highlighted by Pygments ('terminal': ANSI colours; 'html': spans with classes), one
    output line per input line; the lines unchanged (escaped for html) when that cannot be done."""
    try:
        from pygments import highlight as run
        from pygments.lexers import TextLexer, get_lexer_for_filename
        from pygments.util import ClassNotFound

        try:
            lexer = get_lexer_for_filename(path, stripnl=False, stripall=False, ensurenl=True)
        except ClassNotFound:
            lexer = TextLexer(stripnl=False, ensurenl=True)
        if fmt == "html":
            from pygments.formatters import HtmlFormatter

            formatter = HtmlFormatter(nowrap=True)
        else:
            from pygments.formatters import TerminalFormatter

            formatter = TerminalFormatter()
        out = run("\n".join(lines) + "\n", lexer, formatter).split("\n")
        if out and out[-1] == "":
            out.pop()
        if len(out) == len(lines):
            return out
    except Exception:  # a lexer failing on odd input must not cost the user the code
        pass
    if fmt == "html":
        import html

        return [html.escape(s) for s in lines]
    return list(lines)


# -- diff -------------------------------------------------------------------------------------------------


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


def format_diff(d: dict, color: bool = False) -> list[str]:
    def paint(s: str, code_: str) -> str:
        return f"\x1b[{code_}m{s}\x1b[0m" if color else s

    old = f"a/{d['path_a']}" if d["path_a"] else "/dev/null"
    new = f"b/{d['path_b']}" if d["path_b"] else "/dev/null"
    if d["status"] in ("unchanged", "moved"):
        return []
    if d.get("binary"):
        return [f"Binary files {old} ({d['a']}) and {new} ({d['b']}) differ"]
    out = [paint(f"--- {old}\t({d['a']})", "1"), paint(f"+++ {new}\t({d['b']})", "1")]
    for h in d["hunks"]:
        out.append(
            paint(
                f"@@ -{_range(h['old_start'], h['old_lines'])} +{_range(h['new_start'], h['new_lines'])} @@",
                "36",
            )
        )
        for line in h["lines"]:
            out.append(
                paint(line, "31") if line[:1] == "-" else paint(line, "32") if line[:1] == "+" else line
            )
    return out
