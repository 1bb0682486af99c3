"""`sim workflows [NAME|FILE]`: the shipped workflows, or one workflow's shape as `sim` reads it."""

from __future__ import annotations

from typing import Any

import click

from sim.base.limits import printable
from sim.commands.common import emit_json


def describe(name: str) -> dict[str, Any]:
    """A workflow as `sim` reads it: its steps in the order they run, what the journal keys
    each one by (the parts it reads, through the steps it reads), the artifact, the effects,
    the dependants, the worked example's faults placed by the workflow's rule, and whether this
    version's engine runs it (and with which settings, or why not)."""
    from dataclasses import asdict

    from sim.model.workflow import engine_shape, example_faults, order, reads_through
    from sim.workflow import load

    wf = load(name)
    shape = engine_shape(wf)
    return {
        "name": wf.name,
        "description": wf.description,
        "file": wf.source,
        "reference": wf.reference,
        "inputs": {i.name: list(i.parts) for i in wf.inputs},
        "steps": [{"name": n, "reads": list(wf.step[n].reads), "calls": wf.step[n].calls,
                   "keyed_by": list(reads_through(wf, n))} for n in order(wf)],  # fmt: skip
        "artifact": asdict(wf.artifact),
        "effects": [asdict(e) for e in wf.effects],
        "dependants": [asdict(d) for d in wf.dependants],
        "worked_example": asdict(example_faults(wf)),
        "runs": not isinstance(shape, str),
        **({"why_not": shape} if isinstance(shape, str)
           else {"settings": shape.knobs, "engine_steps": {f"s{n + 1}": name for n, name in enumerate(shape.steps)}}),
    }


def _lines(d: dict[str, Any]) -> list[str]:
    # what the file says is shown, never obeyed: a terminal's escapes in it are written as escapes
    d = {**d, **{k: printable(d[k]) for k in ("description", "file", "reference", "why_not") if k in d}}
    ex = d["worked_example"]
    lines = [click.style(d["name"], bold=True) + f"  ({d['file']})", f"  {d['description']}", "  steps, in the order they run:"]
    for s in d["steps"]:
        calls = "" if s["calls"] == 1 else f", {s['calls']} model calls"
        lines.append(f"    {s['name']}: reads {', '.join(s['reads'])}{calls}; journal key names {', '.join(s['keyed_by'])}")
    a = d["artifact"]
    lines.append(f"  artifact {a['name']}: assembles {', '.join(a['assembles'])}; figure from {a['figure']}; "
                 f"assessor checks {a['assessor']}")  # fmt: skip
    for e in d["effects"]:
        extra = (f", remembers keys {e['retention']} ticks" if e["retention"] else "") + (", sends a correction" if e["correction"] else "")
        after = "the acceptance" if e["after"] == "acceptance" else e["after"]
        lines.append(f"  effect {e['name']} (after {after}): receiver {e['receiver']}{extra}")
    for dep in d["dependants"]:
        fixed = "".join(f", {k} {dep[k]}" for k in ("rule", "gate") if dep[k])
        lines.append(f"  dependant {dep['name']}: ready at t{dep['ready']}{fixed}")
    lines.append(f"  worked example: #1 falls silent at {ex['silent_step']} (t{ex['silent_tick']}, wakes t{ex['wake_tick']} "
                 f"if paused); {ex['changed']} changes at t{ex['change_ticks'][0]} or t{ex['change_ticks'][1]}; "
                 f"the poster of {ex['poster_effect']} dies after its send")  # fmt: skip
    if d["runs"]:
        settings = " ".join(f"{k}={v}" for k, v in d["settings"].items())
        lines.append(f"  runs today (sim trace main --workflow {d['reference']}; sim sweep --workflow {d['reference']}), "
                     f"with {settings}")
        lines.append("  the swimlane's steps: " + ", ".join(f"{k} {v}" for k, v in d["engine_steps"].items()))
    else:
        lines.append(f"  not run yet: {d['why_not']}")
    return lines


@click.command()
@click.argument("workflow", required=False, metavar="[NAME|FILE]")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def workflows(workflow: str | None, as_json: bool) -> int:
    """List the shipped workflows (workflows/*.toml), or show one workflow (a name or a .toml
    file): its steps in the order they run, what the journal keys each by, its artifact,
    effects and dependants, the worked example's faults for it, and whether this version runs it."""
    from sim.workflow import names

    docs = [describe(workflow)] if workflow is not None else [describe(n) for n in names()]
    if as_json:
        emit_json(docs[0] if workflow is not None else docs)
        return 0
    import textwrap

    for i, d in enumerate(docs):
        if i:
            click.echo()
        for line in _lines(d):
            indent = " " * (len(line) - len(line.lstrip()) + 4)
            click.echo(textwrap.fill(line, width=88, subsequent_indent=indent, break_on_hyphens=False))
    return 0
