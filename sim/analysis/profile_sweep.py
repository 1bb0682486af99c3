"""`sim sweep --profile NAME`: the reader's question, "which protections does my engine give
me, and what must my application add?", answered over the worked example's event
combinations (docs/profiles.md).

For a profile it runs the twelve event combinations (how the first worker goes silent, when
the report changes, whether the first poster dies) under the engine's own settings, then
with each protection the application must add switched on alone, then with all of them.

A setting the engine gives may, as the model runs it, include some of the application's code
(a claim's `application_part`: Bazel's input hashing is the engine's, but the model's pins
also make the assessor compare part hashes with the current report, and a build cache accepts
nothing). Then one more row runs the engine with that setting's protection off, and the
engine is credited only with what it keeps there (`credit`): an invariant that holds only
through the application's part is credited to that part, not to the engine. Each
row counts, per invariant, the event combinations in which it broke, and the runs that did
not finish, with the model calls they spent. The runs are ordinary runs of the worked example's
schedule (`sim.model.schedule.worked_example`), the same the 864-run sweep makes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sim.model.profiles import Profile
from sim import properties
from sim.properties import ARTICLE_NAMES
from sim.run import simulate
from sim.model.schedule import worked_example
from sim.model.switches import FAULT_SWITCHES, PROTECTIONS, SWITCHES, Switches

if TYPE_CHECKING:  # a workflow's module only when the sweep runs one
    from sim.model.workflow import Workflow

#: every event combination, in the sweep's order (first value first)
EVENTS: tuple[dict[str, str], ...] = tuple(
    dict(zip(FAULT_SWITCHES, values, strict=True))
    for values in itertools.product(*[[m.value for m in SWITCHES[name]] for name in FAULT_SWITCHES])
)


@dataclass(frozen=True, slots=True)
class Row:
    """One configuration over the event combinations."""

    label: str  # "engine alone", "+ key=per-operation", "+ all of them"
    adds: tuple[str, ...]  # the settings added to the engine's
    #: invariant -> event combinations (of len(EVENTS)) in which it broke
    broken: dict[str, int]
    unfinished: int
    model_calls: int  # over every event combination

    @property
    def keeps(self) -> tuple[str, ...]:
        return tuple(name for name, n in self.broken.items() if n == 0)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "adds": list(self.adds), "broken": self.broken,
                "unfinished": self.unfinished, "model_calls": self.model_calls}  # fmt: skip


def run_switches(profile: Profile, adds: tuple[str, ...], sets: dict[str, str]) -> list[Switches]:
    """The switches of a row's runs, one per event combination: the engine's, `adds` and `sets`."""
    added = dict(a.split("=", 1) for a in adds)
    return [profile.switches({**added, **events, **sets}) for events in EVENTS]


def row(profile: Profile, label: str, adds: tuple[str, ...], sets: dict[str, str],
        workflow: Workflow | None = None) -> Row:  # fmt: skip
    broken = dict.fromkeys(ARTICLE_NAMES, 0)
    unfinished = calls = 0
    own: dict[str, str] = {}
    if workflow is not None:  # its assessor's settings, under --set; its effects and dependants
        from sim.model.workflow import knobs_of, on_workflow

        own = knobs_of(workflow)
    for switches in run_switches(profile, adds, {**own, **sets}):
        if workflow is not None:
            switches = on_workflow(switches, workflow)
        _, result = simulate(switches, worked_example(switches, workflow))
        for name in result.broken:  # every invariant judged, the article's and those beyond it
            broken[name] = broken.get(name, 0) + 1
        unfinished += not result.finished
        calls += result.model_calls
    return Row(label, adds, broken, unfinished, calls)


#: the label of the row that runs the engine less the application's part of its settings
OWN = "engine's own part"


def protection_off(name: str) -> str:
    """The value that turns the protection `name` off (the first of its other values)."""
    return str(next(m.value for m in SWITCHES[name] if m is not PROTECTIONS[name]))


def own_part(profile: Profile) -> tuple[str, ...]:
    """The settings that take the application's part out of the engine's: each claim with an
    application part, with its protection off."""
    return tuple(f"{c.name}={protection_off(c.name)}" for c in profile.engine if c.application_part)


def profile_rows(profile: Profile, sets: dict[str, str] | None = None, workflow: Workflow | None = None) -> list[Row]:
    """The engine alone, the engine's own part (when a setting it gives includes application
    code), each missing protection added alone, and all of them (when more than one is
    missing). `sets` (from `--set`) applies to every row; with `workflow`, the runs are its
    worked example, its receiver's and assessor's settings under `sets`."""
    sets = sets or {}
    rows = [row(profile, label, adds, sets, workflow) for label, adds in row_adds(profile)]
    # an invariant beyond the article's that broke in some row (a knob under --set can make one
    # reachable) is a column of every row: 0 where it held, so that a row keeps it
    beyond = [name for name in properties.NAMES if name not in ARTICLE_NAMES and any(name in r.broken for r in rows)]
    return [replace(r, broken={name: r.broken.get(name, 0) for name in (*ARTICLE_NAMES, *beyond)}) for r in rows]


def row_adds(profile: Profile) -> list[tuple[str, tuple[str, ...]]]:
    """Each row's label and the settings it adds to the engine's: none, each missing
    protection alone, and all of them (when more than one is missing)."""
    missing = tuple(c.setting for c in profile.missing())
    rows: list[tuple[str, tuple[str, ...]]] = [("engine alone", ())]
    if own_part(profile):
        rows.append((OWN, own_part(profile)))
    rows += [(f"+ {m}", (m,)) for m in missing]
    if len(missing) > 1:
        rows.append(("+ all of them", missing))
    return rows


def credit(profile: Profile, rows: list[Row]) -> list[str]:
    """The sweep's verdict in words: what the engine keeps by itself (never what holds only
    through the application's part of one of its settings), what that part keeps, and what each
    addition keeps beyond the engine as run."""
    alone = rows[0]
    own = next((r for r in rows if r.label == OWN), alone)
    lines = ["the engine alone keeps: " + (", ".join(own.keeps) or "none of the invariants")]
    if own is not alone:
        parts = [c for c in profile.engine if c.application_part]
        named = "; ".join(f"{c.setting}: {c.application_part.partition(':')[0]}" for c in parts)
        gained = [k for k in alone.keeps if k not in own.keeps]
        lines.append(f"with the application's part ({named}): also keeps " + (", ".join(gained) or "nothing more"))
    for r in rows[1:]:
        if r is own:
            continue
        gained = [k for k in r.keeps if k not in alone.keeps]
        lines.append(f"{r.label}: also keeps " + (", ".join(gained) or "nothing more"))
    return lines


def engine_keeps(profile: Profile, rows: list[Row] | None = None) -> tuple[str, ...]:
    """The invariants the sweep credits to the engine by itself."""
    rows = rows if rows is not None else profile_rows(profile)
    return next((r for r in rows if r.label == OWN), rows[0]).keeps
