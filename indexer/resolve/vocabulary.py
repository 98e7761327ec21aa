"""The names resolution reads a parser's contract by, and the parts of a name's code: each kind's contract
methods (which extract, which stream) and the parts `diff` counts changes by. Apart from logic.py, which
uses them, so that the answers reading them (card, diff) start without importing the resolver."""

TOOL = ("extract_tool_calls", "extract_tool_calls_streaming", "adjust_request")
REASONING = (
    "extract_reasoning",
    "extract_reasoning_streaming",
    "extract_reasoning_content",
    "extract_reasoning_content_streaming",
    "is_reasoning_end",
    "extract_content_ids",
)
ENGINE = ("parse", "parse_delta")
CONTRACT = {"tool": TOOL, "reasoning": REASONING, "engine": ENGINE + TOOL[:2] + REASONING[:2]}
PRIMARY = {
    "tool": ("extract_tool_calls",),
    "reasoning": ("extract_reasoning", "extract_reasoning_content"),
    "engine": ("parse",),
}
STREAMING = {
    "tool": ("extract_tool_calls_streaming",),
    "reasoning": ("extract_reasoning_streaming", "extract_reasoning_content_streaming"),
    "engine": ("parse_delta",),
}

# What a name runs, by part (README, "What runs for a name"): its extraction and streaming methods, its
# classes' other methods and own statements, the module-level functions, constants and helper classes they
# call or read (in its module or imported from another), and the imports that bind those names.
PARTS = ("extraction", "methods", "functions", "imports")
