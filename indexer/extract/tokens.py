"""What a token string is (`<tool_call>`, `</think>`, `<|im_start|>`, `<function=`, `<｜tool▁sep｜>`,
`[TOOL_CALLS]`): the rule of extract/sentinels.py, here without tree-sitter so that the answers reading
texts (answers/markup.py) share it without loading a parser.

A **token** is `<` + an optional `/` + one or more word characters, `|`, `:`, `-` or non-ASCII non-space
characters (at least one a letter) + `>` or a final `=`; or `[` + an optional `/` + a name of letters, digits
and `_` with at least two capitals + `]`.
"""

from __future__ import annotations

import re

_BODY = r"(?:[\w|:\-]|[^\x00-\x7f\s])"
_ANGLE = rf"</?{_BODY}+(?:>|=)"
_SQUARE = r"\[/?[A-Za-z][A-Za-z0-9_]*\]"
TOKEN = re.compile(rf"{_ANGLE}|{_SQUARE}")
TOKENS = re.compile(rf"(?:{_ANGLE}|{_SQUARE})(?:\s*(?:{_ANGLE}|{_SQUARE}))*")


def is_token(s: str) -> bool:
    if not any(c.isalpha() for c in s):
        return False
    if s.startswith("["):
        return sum(c.isupper() for c in s) >= 2
    return True
