"""The text and Markdown of `fit` (answers/fit.py's `Fit`): the observed markup, the ranked candidates with their
evidence, the shipped template, the replay, the `vllm serve` line."""

from __future__ import annotations

from ..answers import markup
from ..answers.fit import SHOWN, Fit, ReplayRun
from ..answers.markup import one_line  # noqa: F401 (the browser's fit page writes values with it)


def _one_line(s: str | None, limit: int = 160) -> str:
    s = (s or "").replace("\n", "\\n")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def format_text(f: Fit) -> str:
    o = f.observed
    lines = [f"fit {f.file} at {f.version}: {o.why}"]
    if o.call:
        lines.append(f"  call markup   {_one_line(o.call.strip())}")
    if o.input != "model":
        lines.append(f"  shape         {markup.describe(o.shapes)}")
    if f.documented:
        d = f.documented
        lines.append(f"  documented    {d.family} ({d.match}){'; section ' + d.section if d.section else ''}")
    if o.tokens:
        lines.append(f"  tokens        {' '.join(o.tokens)}")
    if o.vocabulary is not None:
        lines.append(f"  vocabulary    {o.vocabulary} added token(s), {len(o.special)} special")
    for n in o.notes:
        lines.append(f"  note          {n}")
    for label, cands in (("tool parsers", f.tool), ("reasoning parsers", f.reasoning)):
        if f.kind and not cands:
            continue
        lines.append("")
        lines.append(label)
        if not cands:
            lines.append("  none with evidence for it")
        for c in cands[:SHOWN]:
            same = f"; same class: {', '.join(c.aliases)}" if c.aliases else ""
            lines.append(
                f"  {c.rank}. {c.name} (score {c.score})  {c.impl}, {c.real_class or '-'}"
                f" {c.real_file or ''}{same}"
            )
            for e in c.evidence:
                mark = {"for": "+", "against": "-", "note": "="}[e.stance]
                lines.append(f"       {mark} {e.text}")
            if not c.evidence:
                lines.append(f"       expects {c.expects}")
        if len(cands) > SHOWN:
            lines.append(f"  ... and {len(cands) - SHOWN} more (--format json lists them)")
    if f.template_diff:
        d = f.template_diff
        lines.append("")
        head = "the same call markup" if d.identical else f"{d.similarity:.0%} alike"
        lines.append(f"shipped template  {d.template}: {head}" + (" (the same file)" if d.same_file else ""))
        if not d.identical:
            lines.append(f"  diff  {_one_line(d.inline, 400)}")
    elif f.template:
        lines.append("")
        lines.append(f"shipped template  {f.template}")
    if f.replay:
        lines.append("")
        lines.append(
            f"replayed at {f.version} (vLLM's own code on the output; non-streaming, then one token per delta)"
        )
        for r in f.replay:
            lines.append(f"  {r.name:<16} {_replay_line(r)}")
    lines += _pair_text(f)
    lines.append("")
    lines.append(f.verdict)
    lines.append(f"=> {f.serve}" if f.serve else "=> no vllm serve line: nothing fits as written")
    return "\n".join(lines)


def _pair_text(f: Fit) -> list[str]:
    """The pair, the evidence that decided it, a tie, the proof and the documentation's notes."""
    lines = []
    if f.pair:
        p = f.pair
        lines += ["", "pair"]
        for kind, name in (("tool", p.tool), ("reasoning", p.reasoning)):
            if not name:
                continue
            lines.append(f"  {kind:<11} {name}")
            for e in [e for e in p.evidence if e.parser == name][:4]:
                lines.append(f"       {'+' if e.stance == 'for' else '='} {e.text}")
        for kind, names in p.tie.items():
            lines.append(
                f"  tie         {kind}: {', '.join(names)} (no evidence separates them; the line names {names[0]})"
            )
    if f.proof:
        pr = f.proof
        lines += ["", f"proof at {pr.version}: " + _proof_head(pr)]
        for run in pr.tried:
            who = run.tool + (f" + {run.reasoning}" if run.reasoning else "")
            lines.append(f"  {who:<28} {'passes' if run.ok else 'FAILS ' + run.failure()}")
            if run.ok:
                for o in run.outputs:
                    where = f" (its switch {o.state})" if o.state else ""
                    lines.append(f"       on {o.what}{where}: {', '.join(m.mode for m in o.modes)}")
    if f.documented and f.documented.notes:
        lines += ["", "the documentation says"]
        for n in f.documented.notes:
            lines.append(f"  {n.text} ({n.file}:{n.line})")
    return lines


def _proof_head(pr) -> str:
    if pr.ok is None:
        return f"not run: {pr.skipped}"
    if pr.ok:
        return (
            f"--tool-call-parser {pr.tool}"
            + (f" --reasoning-parser {pr.reasoning}" if pr.reasoning else "")
            + f" returns the call intact on {len(pr.outputs)} output(s), in every mode"
        )
    return "no pair tried passes"


def _replay_line(r: ReplayRun) -> str:
    if r.status != "ok" or (r.error and not r.calls):
        return f"{r.status}: {r.error or 'no result'}"
    out = ", ".join(r.calls) or "no tool call"
    if r.streamed is not None and r.streamed != r.calls:
        out += f"; streamed: {', '.join(r.streamed) or 'no tool call'}"
    if r.leaked:
        out += f"; call markup in the content: {' '.join(r.leaked)}"
    return out


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", "\\n")


def format_markdown(f: Fit) -> str:
    o = f.observed
    lines = [f"# Which parser fits `{f.file}` at vLLM {f.version}", "", f"{o.why}.", ""]
    if o.call:
        lines += [f"Call markup: `{_md(_one_line(o.call, 300))}` — {markup.describe(o.shapes)}.", ""]
    for label, cands in (("Tool parsers", f.tool), ("Reasoning parsers", f.reasoning)):
        if f.kind and not cands:
            continue
        lines += [
            f"## {label}",
            "",
            "| rank | name | score | real class | evidence for | evidence against |",
            "|---|---|---|---|---|---|",
        ]
        for c in cands[:SHOWN]:
            pro = "<br>".join(_md(e.text) for e in c.evidence if e.stance != "against")
            con = "<br>".join(_md(e.text) for e in c.evidence if e.stance == "against")
            lines.append(f"| {c.rank} | {c.name} | {c.score} | {c.real_class or ''} | {pro} | {con} |")
        lines.append("")
    if f.template_diff:
        d = f.template_diff
        lines += [
            f"Shipped template: `{d.template}` ({'the same call markup' if d.identical else f'{d.similarity:.0%} alike'}).",
            "",
        ]
        if not d.identical:
            lines += ["```text", d.inline, "```", ""]
    if f.replay:
        lines += [
            "## Replay",
            "",
            f"vLLM {f.version}'s own code on the output (non-streaming, then one token per delta).",
            "",
            "| name | status | calls | streamed | call markup in the content |",
            "|---|---|---|---|---|",
        ]
        for r in f.replay:
            lines.append(
                f"| {r.name} | {r.status if not r.error else _md(f'{r.status}: {r.error}')} | "
                f"{_md(', '.join(r.calls)) or 'none'} | "
                f"{'-' if r.streamed is None else _md(', '.join(r.streamed)) or 'none'} | "
                f"{_md(' '.join(r.leaked)) or 'none'} |"
            )
        lines.append("")
    if f.pair or f.proof:
        lines += ["## Pair", ""]
        if f.pair:
            lines += ["| parser | evidence |", "|---|---|"]
            for e in f.pair.evidence:
                lines.append(f"| {e.parser} | {_md(e.text)} |")
            for kind, names in f.pair.tie.items():
                lines.append(f"| tie ({kind}) | {_md(', '.join(names))}: no evidence separates them |")
            lines.append("")
        if f.proof:
            lines += [f"Proof at {f.proof.version}: {_md(_proof_head(f.proof))}.", ""]
            for run in f.proof.tried:
                who = run.tool + (f" + {run.reasoning}" if run.reasoning else "")
                lines.append(f"- `{who}`: {'passes' if run.ok else 'fails ' + _md(run.failure())}")
            lines.append("")
    lines += [f.verdict, ""]
    lines += ["```sh", f.serve, "```"] if f.serve else ["No `vllm serve` line: nothing fits as written."]
    return "\n".join(lines) + "\n"
