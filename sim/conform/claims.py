"""Which of an engine's profile claims the schedules run on it exercise, and which rest on its
documentation alone.

A claim is a setting of the engine's profile (`sim.model.profiles`, docs/profiles.md): `name=value`.
A schedule run on the engine **tells the claim apart** from another value of the setting when
`sim`'s prediction under the profile with that other value differs from its prediction under
the profile in a figure the run compared. The claim is **exercised** when, for every other
value, some schedule run here tells it apart and the run agreed with the profile's prediction
on a figure that differs (a match, or explained by a behaviour; a figure that varied between
runs tells nothing either way, and so does a value explained by a behaviour that is the other
value's prediction), and none disagreed; it is **contradicted** when a schedule
that tells it apart had a MISMATCH on such a figure; and it is
**documentation-only** when no schedule run here tells it from some other value (then it rests
on the source the profile cites).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim.conform import harness
from sim.conform.engines import APPLICATION, Engine
from sim.model.knobs import KNOBS
from sim.model.profiles import get
from sim.model.switches import SWITCHES


def values(name: str) -> list[str]:
    """Every value of a switch or knob (a knob's named values)."""
    return [str(m.value) for m in SWITCHES[name]] if name in SWITCHES else [str(v) for v in KNOBS[name].values]


def judge(engine: Engine, runs: list[tuple[harness.Fault, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Each claim of the engine's profile, judged over the schedules run on it (each fault
    with the rows its run gave)."""
    settings = engine.switches
    predicted = {fault.name: harness.figures(harness.predict(engine, fault)) for fault, _ in runs}
    out = []
    for claim in get(engine.profile).engine:
        if claim.name in APPLICATION:
            continue
        told: dict[str, list[str]] = {}
        against: list[str] = []
        for other in values(claim.name):
            if other == claim.value:
                continue
            told[other] = []
            switched = {**settings, claim.name: other}
            for fault, rows in runs:
                figures = harness.figures(harness.predict(engine, fault, switched))
                differs = {f for f, v in predicted[fault.name].items() if figures.get(f) != v}
                verdicts = {r["figure"]: r["verdict"] for r in rows if r["figure"] in differs}
                # explained, the engine's value is not the profile's prediction: it tells the
                # claim apart only when it is not the other value's prediction either
                agrees = [r for r in rows if r["figure"] in differs and (r["verdict"] == "match" or (
                    r["verdict"] == "explained" and r["observed"] != figures.get(r["figure"])))]  # fmt: skip
                if any(v == "MISMATCH" for v in verdicts.values()):
                    against.append(f"{fault.name} ({', '.join(sorted(f for f, v in verdicts.items() if v == 'MISMATCH'))})")
                elif agrees:
                    told[other].append(fault.name)
        out.append(verdict(claim.setting, told, against))
    return out


def verdict(setting: str, told: dict[str, list[str]], against: list[str]) -> dict[str, Any]:
    untold = [other for other, faults in told.items() if not faults]
    if against:
        status = "contradicted"
        why = f"disagreed where another value predicts otherwise: {'; '.join(sorted(set(against)))}"
    elif untold:
        status = "documentation-only"
        why = f"no schedule run here tells it from {', '.join(untold)}"
    else:
        status = "exercised"
        why = "; ".join(f"against {other}: {len(faults)} schedule(s), e.g. {faults[0]}" for other, faults in told.items())
    return {"claim": setting, "status": status, "why": why}


def for_document(engine: Engine, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The claims judged over a `sim conform` document's runs: its fixed faults and, with
    `--explore`, its drawn schedules (each one's scenario file written again from its name
    where the document has none: a report's)."""
    import tempfile

    from sim.conform.schedule import Schedule, scenario_text
    from sim.base.files import write_out

    fixed = {f.name: f for f in harness.FAULTS}
    runs = [(fixed[item["fault"]], item["rows"]) for item in doc["faults"]]
    with tempfile.TemporaryDirectory(prefix="sim-conform-claims-") as folder:
        for item in doc.get("explore", {}).get("schedules", ()):
            s = Schedule.from_name(item["schedule"])
            path = item.get("scenario") or f"{folder}/{s.name}.toml"
            if "scenario" not in item:
                write_out(Path(path), scenario_text(s, engine.switches))
            runs.append((harness.Fault(s.name, 0, path, s.how, s), item["rows"]))
        return judge(engine, runs)
