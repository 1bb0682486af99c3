"""`sim conform`'s output: the terminal text, and reports/conformance.md and .json.

Neither holds a timing: the `seconds` of each fault appear only in `--json` on stdout, so the
text and the report files change only when a figure, a verdict or a version does.
"""

from __future__ import annotations

import json
from typing import Any

from sim.conform.harness import without_timings

HEAD = ("figure", "observed", "sim predicts", "verdict")
#: the first line of reports/conformance.md, and the first bytes of reports/conformance.json, as
#: `sim conform --out` writes them: how it tells its own reports from someone else's files
TITLE = "# Conformance: the worked example on real engines\n"
JSON_HEAD = '{\n  "engines": [\n    {\n      "engine": '



def verdict(row: dict[str, str]) -> str:
    if row["verdict"] == "explained":
        return f"explained by {row['behaviour']}"
    if row["verdict"] == "varying":
        return "varying" + (f", explained by {row['behaviour']}" if row.get("behaviour") else "")
    if row.get("difference"):
        return f"{row['verdict']} (first difference: {row['difference']})"
    return row["verdict"]


def _table(rows: list[dict[str, str]], indent: str) -> list[str]:
    cells = [HEAD] + [(r["figure"], r["observed"], r["predicted"], verdict(r)) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    return [indent + "  ".join(c[i].ljust(widths[i]) for i in range(3)) + "  " + c[3] for c in cells]


def summary_line(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    runs = doc.get("runs", 1)
    each = f" (each fault run {runs} times)" if runs > 1 else ""
    return (f"{s['rows']} rows{each}: {s['match']} match, {s['explained']} explained by a behaviour the model "
            f"does not capture, {s['varying']} varying, "
            f"{s['mismatch']} mismatch{'es' if s['mismatch'] != 1 else ''}")  # fmt: skip


def _behaviours(doc: dict[str, Any], bullet: str, end: str) -> list[str]:
    """Each behaviour the rows name: what the engine does, and the values it explains."""
    lines = []
    for name, words in doc["behaviours"].items():
        lines.append(f"{bullet}{name}: {words}{end}")
        for figure, allows in doc.get("predicates", {}).get(name, {}).items():
            lines.append(f"{' ' * len(bullet)}  explains {figure} only where: {allows}{end}")
    return lines


def claims_lines(doc: dict[str, Any], bullet: str) -> list[str]:
    """Each claim of the engine's profile: exercised by the schedules run here, contradicted,
    or documentation-only (sim/conform/claims.py)."""
    quote = "`" if bullet.startswith("-") else ""  # the report's markdown quotes the setting
    return [f"{bullet}{quote}{c['claim']}{quote}: {c['status']} ({c['why']})" for c in doc.get("claims", ())]


KINDS_HEAD = ("fault kind", "schedules", "agree", "explained", "varying", "mismatch")


def explore_lines(doc: dict[str, Any], markdown: bool) -> list[str]:
    """With `--all --explore`: the drawn schedules' tally per fault kind, then each
    disagreement, shrunk, with its scenario file."""
    found = doc.get("explore")
    if not found:
        return []
    head = (f"Drawn schedules (--explore {found['kinds'].get('all', {}).get('schedules', 0)} --seed {found['seed']}, "
            f"each run {found['runs']} times):")  # fmt: skip
    rows = [(kind, *(str(t[k]) for k in ("schedules", "agree", "explained", "varying", "mismatch")))
            for kind, t in found["kinds"].items()]  # fmt: skip
    if markdown:
        lines = [head, "", "| " + " | ".join(KINDS_HEAD) + " |", "|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    else:
        widths = [max(len(r[i]) for r in [KINDS_HEAD, *rows]) for i in range(len(KINDS_HEAD))]
        lines = [head] + ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [KINDS_HEAD, *rows]]
    for d in found["disagreements"]:
        what = "; ".join(f"{r['figure']}: {r['observed']} against {r['predicted']}" for r in d["rows"])
        stopped = "" if d.get("shrink_complete", True) else f" (shrinking stopped at its budget of {d['shrink_runs']} runs)"
        lines.append(f"{'- ' if markdown else '  '}disagreement: {d['drawn']} shrunk to {d['shrunk']}{stopped}, "
                     f"conform-explore/{doc['engine']}/{d['file']}: {what}")  # fmt: skip
    if markdown:
        lines.append("")
    if not found["disagreements"]:
        lines.append(("" if markdown else "  ") + "No disagreement.")
    return lines


def text(doc: dict[str, Any]) -> str:
    """One engine's run, for the terminal."""
    lines = [
        f"sim conform {doc['engine']}: {doc['title']}",
        "versions: " + ", ".join(f"{k} {v}" for k, v in doc["versions"].items()),
        "sim predicts with: " + " ".join(f"--set {k}={v}" for k, v in doc["switches"].items()),
    ]
    for fault in doc["faults"]:
        lines += ["", f"fault {fault['number']}, {fault['fault']} (scenarios/{fault['scenario']}.toml): {fault['how']}"]
        lines += _table(fault["rows"], "  ")
    if doc["behaviours"]:
        lines += ["", "behaviours the model does not capture:"]
        lines += _behaviours(doc, "  ", "")
    if doc.get("explore"):
        lines += ["", *explore_lines(doc, markdown=False)]
    if doc.get("claims"):
        lines += ["", "the profile's claims, against the runs above:"]
        lines += claims_lines(doc, "  ")
    lines += ["", f"{doc['engine']}: {summary_line(doc)}" + ("" if doc["ok"] else " (FAILED)")]
    return "\n".join(lines) + "\n"


def runs_option(docs: list[dict[str, Any]]) -> str:
    runs = max((doc.get("runs", 1) for doc in docs), default=1)
    found = next((doc["explore"] for doc in docs if doc.get("explore")), None)
    drawn = "" if found is None else f" --explore {found['kinds'].get('all', {}).get('schedules', 0)} --seed {found['seed']}"
    return (f" --runs {runs}" if runs > 1 else "") + drawn


def markdown(docs: list[dict[str, Any]]) -> str:
    """reports/conformance.md: every engine run, one table per engine."""
    lines = [
        TITLE.rstrip("\n"),
        "",
        f"Written by `sim conform --all{runs_option(docs)} --out reports` (docs/conform.md says how the harness works).",
        "Each fault is run on the real engine with real processes and signals, and `sim` runs the",
        "fault's scenario file (`scenarios/conform-*.toml`) under the engine's switches; a row is a",
        "match, explained by a behaviour the model does not capture (named below each table, with",
        "the values it explains), varying (its value differed between runs of the fault), or a mismatch.",
    ]
    for doc in docs:
        lines += ["", f"## {doc['engine']}: {doc['title']}", ""]
        lines.append("Versions: " + ", ".join(f"{k} {v}" for k, v in doc["versions"].items()) + ".")
        lines.append("sim predicts with " + ", ".join(f"`{k}={v}`" for k, v in doc["switches"].items()) + ":")
        lines.append("")
        lines += [f"- {reason}" for reason in doc["reasons"]]
        lines += ["", "| fault | figure | observed | sim predicts | verdict |", "|---|---|---|---|---|"]
        for fault in doc["faults"]:
            for n, row in enumerate(fault["rows"]):
                name = f"{fault['number']}. {fault['fault']}" if n == 0 else ""
                lines.append(f"| {name} | {row['figure']} | {row['observed']} | {row['predicted']} | {verdict(row)} |")
        if doc["behaviours"]:
            lines += ["", "Behaviours the model does not capture (a row is explained by one only where its predicate holds):", ""]
            lines += _behaviours(doc, "- ", ".")
        lines += ["", f"Summary of the five faults: {summary_line(doc)}."]
        if doc.get("explore"):
            lines += ["", *explore_lines(doc, markdown=True)]
        if doc.get("claims"):
            lines += ["", "The profile's claims (`sim/conform/claims.py`: exercised when a schedule run here tells it from "
                      "every other value and agreed; documentation-only when none tells it from some value):", ""]
            lines += claims_lines(doc, "- ")
    return "\n".join(lines) + "\n"


def report_json(docs: list[dict[str, Any]]) -> str:
    return json.dumps({"engines": [without_timings(d) for d in docs]}, indent=2) + "\n"
