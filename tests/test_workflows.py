"""Workflow files (sim/model/workflow.py, sim/workflow.py, `sim workflows`, `--workflow`):
the shipped workflows load; the article's, workflows/digest.toml, gives exactly the built-in
worked example; every rule across keys refuses a bad file with one line (exit 2); what the
journal keys a step by and the order steps run in follow the reads, on shapes drawn at random;
a workflow the engine runs today sweeps and traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.model.schedule import worked_example
from sim.model.switches import COMBINATIONS, PROTECTIONS
from sim.model.workflow import (
    MAX_STEPS,
    Artifact,
    Dependant,
    Effect,
    Input,
    Step,
    Workflow,
    WorkflowError,
    check,
    engine_shape,
    on_workflow,
    example_faults,
    order,
    reads_through,
)
from sim import workflow as files
from sim.analysis.sweep import sweep

DIGEST = (Path(__file__).parent.parent / "workflows" / "digest.toml").read_text(encoding="utf-8")


def test_every_shipped_workflow_loads() -> None:
    assert {"digest", "code-change", "research-brief", "chat-summary"} <= set(files.names())
    for name in files.names():
        wf = files.load(name)
        assert wf.name == name and wf.source == f"workflows/{name}.toml"


def test_the_digest_workflow_is_the_built_in_worked_example() -> None:
    """workflows/digest.toml's faults, placed by the workflow's rule, are the article's (silent
    at s3 = t3, waking at t8, section 2 changed at t4 or t12, newsletter at t12) in all 864
    runs; its settings are the engine's defaults, so its sweep is the built-in sweep."""
    digest = files.load("digest")
    ex = example_faults(digest)
    assert (ex.silent_step, ex.silent_tick, ex.wake_tick, ex.changed, ex.change_ticks) == (
        "s3", 3, 8, "report.section-2", (4, 12))
    assert all(worked_example(s, digest) == worked_example(s) for s in COMBINATIONS)
    shape = engine_shape(digest)
    assert not isinstance(shape, str)
    assert shape.knobs == {"assessor": "form"}
    assert all(COMBINATIONS[0].knob(k) == v for k, v in shape.knobs.items())
    # its one effect and one dependant are the article's announcement (a dedup feed that keeps
    # keys for ever) and newsletter: the run's receivers and dependants are the built-in ones
    from sim.engine.state import initial_state
    from sim.model.workflow import on_workflow

    for s in COMBINATIONS[:12]:
        built_in = initial_state(s, worked_example(s)).setup
        assert initial_state(on_workflow(s, digest), worked_example(s, digest)).setup == built_in


def test_a_workflow_with_another_shape_places_the_faults_by_the_rule() -> None:
    """Changing the digest's figure part to the third section moves the silence to s4 and the
    change onto section 3: the rule follows the shape, not the article's ticks."""
    text = DIGEST.replace('figure = ["report.section-2"]', 'figure = ["report.section-3"]')
    ex = example_faults(files.parse(text, "moved.toml"))
    assert (ex.silent_step, ex.silent_tick, ex.changed) == ("s4", 4, "report.section-3")
    fewer = files.parse(DIGEST.replace('ready = 12', 'ready = 15'), "later.toml")
    assert example_faults(fewer).change_ticks == (4, 15)


BAD = [
    ('reads = ["report.section-1"]', 'reads = ["report.section-9"]', "steps.s1.reads: 'report.section-9' is neither"),
    ('reads = ["report.section-1"]', 'reads = ["s2"]', "neither the artifact nor"),  # s1 reads s2: fine; but then...
    ('receiver = "dedup"', 'receiver = "carrier-pigeon"', "effects[0].receiver: found 'carrier-pigeon'; allowed: dedup, no-key, read-back"),
    ('receiver = "dedup"', 'receiver = "dedup"\nafter = "s4"', "effects.announce.after: 's4' comes before the acceptance"),
    ('ready = 12', 'ready = -1', "dependants[0].ready: found -1; allowed: an integer 0..150"),
    ('ready = 12', 'ready = 12\ncolour = "red"', "dependants[0].colour: unknown key; allowed: name, ready, rule, gate"),
    ('name = "s2"', 'name = "s1"', "the name 's1' is already a step's"),
    ('assessor = "form"', 'assessor = "vibes"', "artifact.assessor: found 'vibes'; allowed: form, figures"),
    ('name = "digest"\n', 'name = "Digest!"\n', "name: found 'Digest!'; allowed: a name"),
    ('receiver = "dedup"', 'receiver = "no-key"\nretention = 5', "effects.announce.retention: only a dedup receiver"),
    ('name = "announce"', 'name = "acceptance"', "effects.acceptance: the name 'acceptance' is the artifact's acceptance"),
]


@pytest.mark.parametrize(("old", "new", "says"), BAD)
def test_a_bad_workflow_is_one_line_naming_the_key(old: str, new: str, says: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert old in DIGEST
    path = tmp_path / "bad.toml"
    path.write_text(DIGEST.replace(old, new, 1), encoding="utf-8")
    if "neither the artifact" in says:  # s1 reading s2 and nothing reading s1 is refused
        path.write_text(DIGEST.replace('assembles = ["s1", "s2", "s3", "s4"]', 'assembles = ["s2", "s3", "s4"]'))
    assert main(["workflows", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and says in err, err


def test_a_cycle_is_named_along_its_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = DIGEST.replace('reads = ["report.section-1"]', 'reads = ["report.section-1", "s3"]').replace(
        'reads = ["report.section-3"]', 'reads = ["report.section-3", "s1"]')
    path = tmp_path / "cycle.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["workflows", str(path)]) == 2
    assert "the reads make a cycle (s1 -> s3 -> s1)" in capsys.readouterr().err


def test_bounds_are_checked_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = "".join(f'\n[[steps]]\nname = "x{n}"\nreads = ["report.section-1"]\n' for n in range(MAX_STEPS))
    path = tmp_path / "many.toml"
    path.write_text(DIGEST.replace("[artifact]", steps + "\n[artifact]"), encoding="utf-8")
    assert main(["workflows", str(path)]) == 2
    assert f"steps: {MAX_STEPS + 4} declared; allowed: 1 to {MAX_STEPS}" in capsys.readouterr().err
    special = tmp_path / "dir.toml"
    special.mkdir()
    assert main(["workflows", str(special)]) == 2
    assert "is a folder, not a workflow file" in capsys.readouterr().err


# -- the rules over shapes drawn at random ---------------------------------------------------
@st.composite
def shapes(draw: st.DrawFn) -> Workflow:
    """A workflow of one input of 1..6 parts and 1..10 steps, each reading some parts and
    some earlier steps (so there is no cycle), declared in a shuffled order."""
    parts = tuple(f"p{i}" for i in range(draw(st.integers(1, 6))))
    count = draw(st.integers(1, 10))
    steps = []
    for i in range(count):
        reads = draw(st.lists(st.sampled_from([f"in.{p}" for p in parts]), min_size=1, unique=True))
        earlier = draw(st.lists(st.sampled_from([f"t{j}" for j in range(i)]), unique=True)) if i else []
        steps.append(Step(f"t{i}", tuple(reads + earlier)))
    declared = draw(st.permutations(steps))
    return Workflow("drawn", "drawn", (Input("in", parts),), tuple(declared),
                    Artifact("a", tuple(s.name for s in steps), steps[0].reads[0]),
                    (Effect("e", "dedup"),), (Dependant("d", 12),), "drawn.toml")  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(shapes())
def test_order_and_journal_keys_follow_the_reads(wf: Workflow) -> None:
    """Every step runs after each step it reads; its journal key names exactly the parts it
    reaches through its reads (computed here independently, by fixpoint)."""
    check(wf)
    ran = order(wf)
    assert sorted(ran) == sorted(s.name for s in wf.steps)
    for s in wf.steps:
        assert all(ran.index(r) < ran.index(s.name) for r in s.reads if r in wf.step)
    reach = {s.name: {r for r in s.reads if r not in wf.step} for s in wf.steps}
    changed = True
    while changed:
        changed = False
        for s in wf.steps:
            more = set().union(*(reach[r] for r in s.reads if r in wf.step)) - reach[s.name]
            if more:
                reach[s.name] |= more
                changed = True
    assert all(set(reads_through(wf, s.name)) == reach[s.name] for s in wf.steps)
    ex = example_faults(wf)
    assert ex.silent_step in ran and ex.changed in wf.parts


def test_a_workflow_beyond_the_engine_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A workflow within the file's bounds (32 steps) but past the engine's (26) is refused
    with one line when a command would run it."""
    steps = "".join(f'[[steps]]\nname = "s{i}"\nreads = ["{"ij"[i % 2]}.p{i}"]\n\n' for i in range(27))
    parts = ", ".join(f'"p{i}"' for i in range(0, 27, 2)) + f']\n\n[[inputs]]\nname = "j"\nparts = [' + ", ".join(
        f'"p{i}"' for i in range(1, 27, 2))
    assembles = ", ".join(f'"s{i}"' for i in range(27))
    text = (f'name = "wide"\ndescription = "x"\n\n[[inputs]]\nname = "i"\nparts = [{parts}]\n\n{steps}'
            f'[artifact]\nname = "a"\nassembles = [{assembles}]\nfigure = ["j.p1"]\n\n'
            '[[effects]]\nname = "e"\nreceiver = "dedup"\n')  # fmt: skip
    (tmp_path / "wide.toml").write_text(text, encoding="utf-8")
    files.load(str(tmp_path / "wide.toml"))  # a valid workflow file
    assert main(["trace", "main", "--workflow", str(tmp_path / "wide.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot run it yet: it has 27 steps (this version runs 2 to 26)" in err


# -- a workflow the engine runs today --------------------------------------------------------
def test_the_chat_summary_needs_what_no_key_can_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """chat-summary posts to a receiver with no keys: with every protection on, each run in
    which the poster dies after its send posts twice (duplicate-effect), and no key setting
    changes that; the digest, with the same protections, never does."""
    chat = sweep(workflow=files.load("chat-summary"))
    digest = sweep()
    all_on = [r for r in chat.runs if set(PROTECTIONS) <= set(r.switches.protections_on())]
    assert len(all_on) == 24
    for r in all_on:
        assert ("duplicate-effect" in r.broken) == (r.switches.post_death.value == "yes"), r.switches.label()
    by_id = {r.id: r for r in digest.runs}
    assert all("duplicate-effect" not in by_id[r.id].broken for r in all_on)
    keyed = {r.id: "duplicate-effect" in r.broken for r in chat.runs if r.switches.key.value == "per-operation"}
    assert any(keyed.values())
    assert main(["sweep", "--workflow", "chat-summary", "--json", "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["runs"]) == 864
    assert sorted(p.name for p in (tmp_path / "workflows" / "chat-summary").iterdir()) == [
        "explainer.html", "sweep-map.svg", "sweep.csv", "sweep.json", "sweep.md"]


def test_the_digest_workflow_sweeps_as_the_built_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--workflow", "digest", "--json", "--out", str(tmp_path / "a")]) == 0
    named = capsys.readouterr().out
    assert main(["sweep", "--json", "--out", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out == named


def test_a_scenario_file_may_name_a_workflow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.toml"
    path.write_text('description = "the chat summary"\nworkflow = "chat-summary"\n\n[expect]\nposts_applied = 2\n')
    assert main(["trace", str(path), "--check", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["outcome"]["posts_applied"] == 2 and "receiver" not in doc["switches"]  # the workflow says its receiver
    path.write_text('workflow = "nonesuch"\n')
    assert main(["trace", str(path)]) == 2
    assert "unknown workflow 'nonesuch'" in capsys.readouterr().err


def test_the_tutorial_commands_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each command of docs/workflows.md's first block runs and exits 0 (its --out folder here
    a temporary one)."""
    import os
    import re
    import shlex

    doc = (Path(__file__).parent.parent / "docs" / "workflows.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", doc, re.DOTALL)
    assert block is not None
    commands = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert len(commands) >= 4
    for command in commands:
        args = shlex.split(command.replace("/tmp/r", str(tmp_path)).replace("/tmp/c", str(tmp_path / "c")))
        assert args[0] == "sim"
        # exit 1: the check found the chat's duplicate (the page says so)
        assert main(args[1:]) == (1 if args[1] == "check" else 0), command
    capsys.readouterr()
    assert (tmp_path / "workflows" / "chat-summary" / "sweep.json").is_file()
    # your own: the page's release-notes.toml, then its commands, run where the file is
    own = re.search(r"```toml release-notes.toml\n(.*?)```", doc, re.DOTALL)
    assert own is not None
    (tmp_path / "release-notes.toml").write_text(own.group(1), encoding="utf-8")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for block in re.findall(r"```sh release-notes\n(.*?)```", doc, re.DOTALL):
            for line in block.splitlines():
                if line.strip():
                    assert main(shlex.split(line.split("#", 1)[0])[1:]) == 0, line
        assert "the swimlane's steps: s1 sum-merged, s2 sum-bugs, s3 notes" in capsys.readouterr().out
        for keeps, broken in ((3, ["duplicate-effect", "uncorrected-duplicate"]), (4, []), (6, [])):  # what the page says
            assert main(["trace", "main", "--workflow", "release-notes.toml", "--set", f"retention={keeps}", "--json"]) == 0
            found = json.loads(capsys.readouterr().out)["outcome"]["violations"]
            assert [v["invariant"] for v in found] == broken, keeps
        assert main(["trace", "main", "--workflow", "release-notes.toml", "--set", "retention=3"]) == 0
    finally:
        os.chdir(here)
    assert "duplicate-effect" in capsys.readouterr().out


# -- property tests over random workflows the engine runs --------------------------------------
@st.composite
def runnable(draw: st.DrawFn) -> Workflow:
    """A workflow of a shape this version's engine runs: one or two inputs of parts, 2..10
    steps each reading some parts and some earlier steps (a DAG), the figure a part some step
    reads, one to three effects in order (each dedup, kept for ever or for a drawn number of
    ticks, no key or read-back; with or without a correction), one or two dependants ready at
    drawn ticks."""
    inputs = tuple(Input(f"in{k}", tuple(f"p{i}" for i in range(draw(st.integers(1, 4)))))
                   for k in range(draw(st.integers(1, 2))))  # fmt: skip
    parts = [f"{i.name}.{p}" for i in inputs for p in i.parts]
    steps = []
    for i in range(draw(st.integers(2, 10))):
        reads = draw(st.lists(st.sampled_from(parts), min_size=1, max_size=3, unique=True))
        earlier = draw(st.lists(st.sampled_from([f"t{j}" for j in range(i)]), max_size=2, unique=True)) if i else []
        steps.append(Step(f"t{i}", tuple(reads + earlier)))
    figure = draw(st.sampled_from(sorted({r for s in steps for r in s.reads if "." in r})))
    effects = []
    for k in range(draw(st.integers(1, 3))):
        receiver = draw(st.sampled_from(["dedup", "no-key", "read-back"]))
        retention = draw(st.one_of(st.none(), st.integers(1, 30))) if receiver == "dedup" else None
        effects.append(Effect(f"e{k}", receiver, retention, draw(st.booleans())))
    dependants = tuple(Dependant(f"d{k}", draw(st.integers(0, 40))) for k in range(draw(st.integers(1, 2))))
    return Workflow("drawn", "drawn", inputs, tuple(steps),
                    Artifact("a", tuple(s.name for s in steps), figure, draw(st.sampled_from(["form", "figures"]))),
                    tuple(effects), dependants, "drawn.toml")  # fmt: skip


def _broken(wf: Workflow, **settings: str) -> set[str]:
    """The safety properties broken in any of the worked example's runs of `wf` (every event
    combination, both checkpoint modes) under these protection settings."""
    from sim.model.schedule import worked_example
    from sim.model.workflow import workflow_switches
    from sim.properties import SAFETY
    from sim.run import simulate

    broken: set[str] = set()
    for s in COMBINATIONS:
        if any(getattr(s, k).value != v for k, v in settings.items()):
            continue
        _, result = simulate(workflow_switches(wf, base=s), worked_example(s, wf))
        broken |= set(result.broken) & {p.name for p in SAFETY}
    return broken


ALL_ON = {"fencing": "on", "pins": "on", "key": "per-operation", "rule": "current-accepted"}


@settings(max_examples=12, deadline=None)
@given(runnable())
def test_all_four_protections_hold_at_a_receiver_that_keeps_its_keys(wf: Workflow) -> None:
    """With fencing, pins, the per-operation key and the strict rule all on, a workflow whose
    receivers each deduplicate for the whole run or read back breaks no safety property in any
    of its worked example's runs; a receiver without keys, or one that forgets them, may break
    only what a key would have prevented (a duplicate effect, and whether it was corrected)."""
    check(wf)
    broken = _broken(wf, **ALL_ON)
    if all(e.receiver == "read-back" or (e.receiver == "dedup" and e.retention is None) for e in wf.effects):
        assert broken == set(), broken
    else:
        assert broken <= {"duplicate-effect", "uncorrected-duplicate"}, broken


#: each protection turned off, and what it guards (a drawn shape must show the break)
OFF = [("fencing", "off"), ("pins", "off"), ("key", "none"), ("rule", "any-accepted")]


@pytest.mark.parametrize(("name", "value"), OFF)
def test_each_protection_turned_off_breaks_for_some_shape(name: str, value: str) -> None:
    """Turned off alone, each protection lets a safety property break in the worked example's
    runs of some drawn workflow whose steps read other steps (the search draws shapes until one
    breaks; the article's shape is not among the candidates), so the protections matter beyond
    the article's pipeline."""
    from hypothesis import find

    def breaks(wf: Workflow) -> bool:
        dag = any(r in wf.step for s in wf.steps for r in s.reads)  # not the article's shape
        return dag and _broken(wf, **{**ALL_ON, name: value}) != set()

    from hypothesis import Phase

    # no shrinking: any drawn shape that breaks will do (derandomized: the same one each run)
    found = find(runnable(), breaks, settings=settings(max_examples=60, deadline=None, database=None,
                                                       phases=[Phase.generate], derandomize=True))  # fmt: skip
    assert _broken(found, **{**ALL_ON, name: value})
    assert _broken(found, **ALL_ON) <= {"duplicate-effect", "uncorrected-duplicate"}


def test_the_api_page_runs_and_agrees_with_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    from sim.render.report import render_json

    doc = (Path(__file__).parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", doc, re.DOTALL)
    assert block is not None
    names: dict[str, object] = {}
    exec(compile(block.group(1), "docs/api.md", "exec"), names)  # noqa: S102 (the page's own example)
    capsys.readouterr()
    assert main(["trace", "main", "--workflow", "chat-summary", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert names["outcome"].to_json() == cli["outcome"]  # type: ignore[attr-defined]
    assert main(["sweep", "--workflow", "chat-summary", "--json", "--out", str(tmp_path)]) == 0
    assert render_json(names["result"].document()) == capsys.readouterr().out  # type: ignore[attr-defined]
    assert main(["check", "-k", "1", "-t", "10", "-p", "all-on", "--set", "checkpoints=per-step", "--workflow",
                 "chat-summary", "--json", "--out", str(tmp_path / "c")]) == 1  # fmt: skip
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert names["checked"].violations == row["violations"]  # type: ignore[attr-defined]


# -- the JSON Schema of workflow files (sim schema workflow) -----------------------------------
def test_every_shipped_workflow_validates_against_the_schema_and_mutations_fail_both() -> None:
    """docs/schema/workflow.schema.json (built from `TABLES`): every shipped workflow passes;
    a key-level mutation drawn at random (an unknown key, a value of the wrong type, a choice
    outside its set, a number outside its bounds, a required key left out) is refused by the
    schema and by the loader alike."""
    import copy
    import random
    import tomllib

    import jsonschema

    from sim.schema import workflow as workflow_schema

    validator = jsonschema.Draft202012Validator(workflow_schema())
    shipped = sorted((Path(__file__).parent.parent / "workflows").glob("*.toml"))
    for path in shipped:
        assert not list(validator.iter_errors(tomllib.loads(path.read_text(encoding="utf-8")))), path.name
    rng = random.Random(26)
    mutations = [
        lambda d: d["effects"][0].__setitem__("receiver", "pigeon"),
        lambda d: d["dependants"][0].__setitem__("ready", 151),
        lambda d: d["steps"][0].__setitem__("calls", "one"),
        lambda d: d["artifact"].__setitem__("colour", "red"),
        lambda d: d.pop("artifact"),
        lambda d: d["steps"][0].pop("reads"),
        lambda d: d["inputs"][0].__setitem__("parts", []),
        lambda d: d.__setitem__("name", "Not A Name"),
        lambda d: d["effects"][0].__setitem__("correction", "yes"),
        lambda d: d.__setitem__("steps", []),
    ]
    for n in range(60):
        path = rng.choice(shipped)
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        mutated = copy.deepcopy(data)
        mutations[n % len(mutations)](mutated)
        assert list(validator.iter_errors(mutated)), (path.name, n)
        with pytest.raises(WorkflowError):
            files.parse(_toml(mutated), "mutated.toml")


def _toml(data: dict[str, object]) -> str:
    """A workflow's data as TOML (the few shapes a workflow file has)."""
    def value(v: object) -> str:
        return json.dumps(v) if not isinstance(v, bool) else ("true" if v else "false")

    lines = [f"{k} = {value(v)}" for k, v in data.items() if not isinstance(v, (dict, list)) or (
        isinstance(v, list) and not all(isinstance(x, dict) for x in v) or v == [])]
    for k, v in data.items():
        if isinstance(v, dict):
            lines += [f"\n[{k}]"] + [f"{a} = {value(b)}" for a, b in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for item in v:
                lines += [f"\n[[{k}]]"] + [f"{a} = {value(b)}" for a, b in item.items()]
    return "\n".join(lines) + "\n"


def test_a_wrong_value_fails_the_workflow_schema() -> None:
    import jsonschema

    from sim.schema import workflow as workflow_schema

    data = {"name": "x", "description": "x", "inputs": [{"name": "i", "parts": ["a"]}],
            "steps": [{"name": "s", "reads": ["i.a"]}], "artifact": {"name": "a", "assembles": ["s"], "figure": ["i.a"]},
            "effects": [{"name": "e", "receiver": "dedup"}]}  # fmt: skip
    validator = jsonschema.Draft202012Validator(workflow_schema())
    assert not list(validator.iter_errors(data))
    files.parse(_toml(data), "ok.toml")
    data["effects"][0]["receiver"] = "fax"  # type: ignore[index]
    assert list(validator.iter_errors(data))


def _research_steps_only() -> Workflow:
    """research-brief with its first effect and first dependant only: its steps, which this
    version's engine runs."""
    text = (Path(__file__).parent.parent / "workflows" / "research-brief.toml").read_text(encoding="utf-8")
    text = text[: text.index('[[effects]]\nname = "update-ticket"')] + text[text.index("[[dependants]]"):]
    return files.parse(text[: text.index('[[dependants]]\nname = "archive"')], "research-steps.toml")


def test_a_change_reaches_the_steps_that_read_the_part_through_the_dag() -> None:
    """research-brief's dataset changes (during): the change reaches sum-d (s4) and the
    synthesis that reads sum-d (s6), nothing else; the successor restores the other summaries
    and computes those two again (and s5, which #1 held when it fell silent)."""
    from sim.engine.trace import Kind
    from sim.model.events import payload, ReportChanged, Restored, Computed
    from sim.model.switches import Switches
    from sim.run import simulate

    wf = _research_steps_only()
    shape = engine_shape(wf)
    assert not isinstance(shape, str)
    assert shape.steps == ("sum-a", "sum-b", "sum-c", "sum-d", "sum-e", "synthesis") and shape.changed == (4, 6)
    trace, result = simulate(on_workflow(Switches().with_values(shape.knobs), wf), worked_example(Switches(), wf))
    (change,) = [payload(e, ReportChanged) for e in trace.events if e.kind is Kind.REPORT_CHANGED]
    assert list(change["sections"]) == [4, 6]
    restored = sorted(payload(e, Restored)["step"] for e in trace.events if e.kind is Kind.RESTORED and e.attempt == 2)
    computed = sorted(payload(e, Computed)["step"] for e in trace.events if e.kind is Kind.COMPUTED and e.attempt == 2)
    assert (restored, computed) == ([1, 2, 3], [4, 5, 6])
    # the email has no key: the dying poster's successor emails again, as a correction
    assert result.broken == ("duplicate-effect",)


def test_a_run_on_a_workflow_names_it_and_replays_it() -> None:
    """The title names the workflow; the replay command a page shows gives `--workflow` when it
    came from the command line (a scenario file that names it needs none) and leaves out the
    settings the workflow makes itself (its receiver), keeping those the user set."""
    from sim.commands.trace import replay_command, title_of
    from sim.scenario import load

    given = load("main").with_workflow(files.load("chat-summary")).with_switches({"pins": "off"})
    assert title_of(given).startswith("main (workflow chat-summary): ")
    assert replay_command(given) == "sim trace main --workflow chat-summary --set pins=off"
    named = load("workflow-chat-summary")
    assert named.workflow is not None and replay_command(named) == "sim trace workflow-chat-summary"
    assert replay_command(load("receiver-none")) == "sim trace receiver-none --set receiver=none"


def test_sim_check_on_a_workflow_writes_counterexamples_that_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`sim check --workflow chat-summary`: the setting is the workflow's (3 steps), its receiver
    without keys applies, and every counterexample file names the workflow and replays to the
    figures it expects (sim trace FILE --check)."""
    assert main(["check", "-k", "1", "-t", "10", "-p", "all-on", "--workflow", "chat-summary", "--json",
                 "--out", str(tmp_path)]) == 1  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["bound"]["setting"]["sections"] == 3 and doc["bound"]["workflow"] == "chat-summary"
    files_written = sorted(tmp_path.glob("*.toml"))
    assert files_written and all('workflow = "chat-summary"' in f.read_text() for f in files_written)
    for f in files_written:
        assert main(["trace", str(f), "--check"]) == 0, f.name
    capsys.readouterr()
    assert main(["check", "-k", "1", "-t", "10", "-p", "all-on", "--json", "--out", str(tmp_path / "article")]) == 0
    assert "workflow" not in json.loads(capsys.readouterr().out)["bound"]


def test_sim_explore_on_a_workflow_keeps_its_shape_and_its_files_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`sim explore --workflow chat-summary`: every drawn schedule has the workflow's 3 steps and
    its figure's step (a shrink never moves them), and each counterexample names the workflow
    and replays (sim trace FILE --check)."""
    import random

    from sim.analysis.explore import ExploreBounds, SeededChoices, draw_schedule, for_workflow

    bounds = for_workflow(ExploreBounds(), files.load("chat-summary"), "chat-summary")
    drawn = [draw_schedule(SeededChoices(random.Random(n)), bounds) for n in range(200)]
    assert {(s.sections, s.figure) for s in drawn} == {(3, 2)}
    assert main(["explore", "-n", "300", "--seed", "5", "--workflow", "chat-summary", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "--workflow chat-summary" in out
    written = sorted(tmp_path.glob("*.toml"))
    assert written and all('workflow = "chat-summary"' in f.read_text() for f in written)
    for f in written:
        assert main(["trace", str(f), "--check"]) == 0, f.name


def test_diff_and_the_profile_sweep_take_a_workflow(capsys: pytest.CaptureFixture[str]) -> None:
    """`sim diff --workflow` runs A and B on the workflow: on the chat summary the key changes
    nothing; `sim sweep --profile temporal --workflow chat-summary`: adding the key keeps no
    duplicate away (the chat has none to check), where on the article's pipeline it does."""
    assert main(["diff", "main", "--set", "key=none", "--workflow", "chat-summary", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["first_divergence"] is None and doc["invariants"]["appeared"] == doc["invariants"]["disappeared"] == []
    assert [b["invariant"] for b in doc["invariants"]["both"]] == ["duplicate-effect", "uncorrected-duplicate"]

    def rows(*extra: str) -> dict[str, dict[str, int]]:
        assert main(["sweep", "--profile", "temporal", "--json", *extra]) == 0
        return {r["label"]: r["broken"] for r in json.loads(capsys.readouterr().out)["rows"]}

    chat, article = rows("--workflow", "chat-summary"), rows()
    assert chat["+ key=per-operation"]["duplicate-effect"] == chat["engine alone"]["duplicate-effect"] > 0
    assert article["+ key=per-operation"]["duplicate-effect"] < article["engine alone"]["duplicate-effect"]


def test_the_committed_workflow_reports_are_up_to_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """reports/workflows/NAME/ for each shipped workflow this version runs (but the article's,
    whose reports are reports/): what `sim sweep --workflow NAME --out reports` writes now."""
    committed = Path(__file__).parent.parent / "reports" / "workflows"
    runnable = [n for n in files.names() if n != "digest" and not isinstance(engine_shape(files.load(n)), str)]
    assert runnable and sorted(p.name for p in committed.iterdir()) == runnable
    for name in runnable:
        assert main(["sweep", "--workflow", name, "--out", str(tmp_path)]) == 0
        fresh = tmp_path / "workflows" / name
        for path in sorted((committed / name).iterdir()):
            assert path.read_bytes() == (fresh / path.name).read_bytes(), (
                f"reports/workflows/{name}/{path.name} is stale: run `sim sweep --workflow {name} --out reports`")
        assert sorted(p.name for p in fresh.iterdir()) == sorted(p.name for p in (committed / name).iterdir())
    capsys.readouterr()


@settings(max_examples=25, deadline=None)
@given(runnable(), st.integers(0, 2**32 - 1))
def test_all_four_protections_hold_under_drawn_fault_schedules(wf: Workflow, seed: int) -> None:
    """Beyond the worked example's faults: on a drawn workflow whose receiver keeps its keys,
    with all four protections on, fault schedules of the article's four kinds drawn as `sim
    explore --workflow` draws them (up to 4 faults) break no safety property."""
    import random
    from dataclasses import replace

    from sim.analysis.explore import ExploreBounds, SeededChoices, draw_schedule, for_workflow
    from sim.model.switches import Switches
    from sim.model.workflow import knobs_of
    from sim.properties import SAFETY
    from sim.run import simulate

    wf = replace(wf, effects=(Effect("e", "dedup"),))
    bounds = for_workflow(ExploreBounds(), wf, "drawn")
    choices = SeededChoices(random.Random(seed))
    safety = {p.name for p in SAFETY}
    for _ in range(40):
        schedule = draw_schedule(choices, bounds)
        for checkpoints in ("per-step", "end-only"):
            switches = Switches().with_values({**knobs_of(wf), "checkpoints": checkpoints})
            _, result = simulate(switches, schedule)
            assert not set(result.broken) & safety, (schedule, checkpoints, result.broken)


def test_the_widest_dag_the_bounds_allow_loads_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """32 steps, each reading every step before it (2^31 paths through the reads): each step
    is visited once per question, so the file is checked and shown at once, not in exponential
    time (the check runs under pytest's own clock: it would not finish otherwise)."""
    def reads(n: int) -> str:
        return json.dumps(["report.section-1", *(f"x{m}" for m in range(n))])

    steps = "".join(f'\n[[steps]]\nname = "x{n}"\nreads = {reads(n)}\n' for n in range(MAX_STEPS))
    text = DIGEST[: DIGEST.index("[[steps]]")] + steps + '\n[artifact]\nname = "digest"\nassembles = ["x31"]\n'
    text += 'figure = ["report.section-1"]\n\n[[effects]]\nname = "announce"\nreceiver = "dedup"\n'
    path = tmp_path / "wide.toml"
    path.write_text(text, encoding="utf-8")
    wf = files.load(str(path))
    assert reads_through(wf, "x31") == ("report.section-1",) and order(wf)[-1] == "x31"
    assert main(["workflows", str(path)]) == 0
    capsys.readouterr()


def test_a_step_of_no_model_call_and_one_of_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A workflow's `calls`: the test step of release-notes made a tool run (0 model calls) and
    the notes step two calls: the trace counts them (the minimum is the sum of the steps'
    counts), says so on each computed line, and the article's lines are unchanged."""
    import re

    doc = (Path(__file__).parent.parent / "docs" / "workflows.md").read_text(encoding="utf-8")
    own = re.search(r"```toml release-notes.toml\n(.*?)```", doc, re.DOTALL)
    assert own is not None
    text = own.group(1).replace('reads = ["tracker.open-bugs"]\n', 'reads = ["tracker.open-bugs"]\ncalls = 0\n')
    text = text.replace('reads = ["sum-merged", "sum-bugs"]\n', 'reads = ["sum-merged", "sum-bugs"]\ncalls = 2\n')
    path = tmp_path / "calls.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["trace", "main", "--workflow", str(path), "--no-color", "--width", "120"]) == 0
    out = capsys.readouterr().out
    assert "#1 computes and journals s2 (no model call)" in out and "#1 computes s3 (2 model calls)" in out
    assert "minimum 3)" in out  # 1 + 0 + 2
    assert main(["trace", "main", "--json"]) == 0
    article = json.loads(capsys.readouterr().out)
    assert all("calls" not in e.get("detail", {}) for e in article["events"])
    shape = engine_shape(files.load(str(path)))
    assert not isinstance(shape, str) and shape.calls == (1, 0, 2)


# -- found by the review of this work ------------------------------------------------------------
def test_explore_draws_the_workflows_own_calls_and_its_files_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A workflow with steps of 0 and 2 model calls: explore's drawn runs are the workflow's
    (its calls), so a counterexample replays with --check."""
    text = DIGEST.replace('reads = ["report.section-1"]\n', 'reads = ["report.section-1"]\ncalls = 0\n').replace(
        'reads = ["report.section-3"]\n', 'reads = ["report.section-3"]\ncalls = 2\n').replace(
        'name = "digest"\ndescription', 'name = "calls"\ndescription')
    path = tmp_path / "calls.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["explore", "-n", "200", "--seed", "1", "--set", "fencing=off", "--workflow", str(path),
                 "--out", str(tmp_path / "ex")]) in (0, 1)  # fmt: skip
    written = sorted((tmp_path / "ex").glob("*.toml"))
    assert written
    for f in written:
        assert f'workflow = "{path.resolve()}"' in f.read_text()
        assert main(["trace", str(f), "--check"]) == 0, f.name
    capsys.readouterr()


def test_a_users_own_file_is_never_taken_for_a_shipped_workflow(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A file of the user's at ./workflows/digest.toml with another shape (a chat, no keys) runs
    as itself: its sweep is not the article's, and its counterexamples name its path."""
    (tmp_path / "workflows").mkdir()
    chat = (Path(__file__).parent.parent / "workflows" / "chat-summary.toml").read_text(encoding="utf-8")
    (tmp_path / "workflows" / "digest.toml").write_text(chat.replace('name = "chat-summary"', 'name = "digest"'))
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "--workflow", "workflows/digest.toml", "--json", "--out", "out"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["workflow_reference"] == "workflows/digest.toml"
    assert (tmp_path / "out" / "workflows" / "digest" / "sweep.json").is_file()
    assert main(["check", "-k", "1", "-t", "10", "-p", "all-on", "--workflow", "workflows/digest.toml", "--out", "c"]) == 1
    capsys.readouterr()
    for f in (tmp_path / "c").glob("*.toml"):
        assert f'workflow = "{(tmp_path / "workflows" / "digest.toml").resolve()}"' in f.read_text()
        assert main(["trace", str(f), "--check"]) == 0


def test_another_workflow_does_not_inherit_the_former_ones_settings(capsys: pytest.CaptureFixture[str]) -> None:
    """workflow-chat-summary names the chat (no keys); run on the article's workflow instead,
    it has the article's receiver, not the chat's."""
    assert main(["trace", "workflow-chat-summary", "--workflow", "digest", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "receiver" not in doc["switches"] and doc["outcome"]["violations"] == []


def test_the_after_change_comes_after_the_during_change_and_sections_are_the_workflows(tmp_path: Path,
                                                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    early = files.parse(DIGEST.replace("ready = 12", "ready = 0"), "early.toml")
    assert example_faults(early).change_ticks == (4, 5)
    path = tmp_path / "s.toml"
    path.write_text('workflow = "chat-summary"\n\n[schedule]\nsections = 26\n', encoding="utf-8")
    assert main(["trace", str(path)]) == 2
    assert "schedule.sections: found 26; the workflow chat-summary has 3 steps" in capsys.readouterr().err


def test_the_api_runs_the_shipped_digest_as_the_built_in_sweep() -> None:
    """`sim.sweep(workflow=load_workflow("digest"))` is `sim.sweep()`, as the CLI's `--workflow
    digest` is `sim sweep`: the same document, no workflow label."""
    assert sweep(workflow=files.load("digest")).document() == sweep().document()


def test_the_shipped_release_notes_is_the_tutorials() -> None:
    """workflows/release-notes.toml is the block docs/workflows.md asks a reader to save (its
    comment lines aside): the two cannot drift apart."""
    import re

    doc = (Path(__file__).parent.parent / "docs" / "workflows.md").read_text(encoding="utf-8")
    own = re.search(r"```toml release-notes.toml\n(.*?)```", doc, re.DOTALL)
    shipped = (Path(__file__).parent.parent / "workflows" / "release-notes.toml").read_text(encoding="utf-8")
    assert own is not None and "\n".join(l for l in shipped.splitlines() if not l.startswith("#")) + "\n" == own.group(1)


@pytest.mark.parametrize(("receiver", "posts", "broken"), [("read-back", 1, ()), ("no-key", 2, ("duplicate-effect",))])
def test_a_read_back_receiver_is_asked_before_a_resend(receiver: str, posts: int, broken: tuple[str, ...]) -> None:
    """The poster dies after its send; its successor inherits the effect. A read-back receiver
    answers that it applied the post, so nothing is sent again; the same receiver without
    read-back applies the resend: the verdict tells the two apart."""
    from sim.model.workflow import workflow_switches
    from sim.run import simulate

    wf = Workflow("rb", "rb", (Input("in", ("a", "b")),), (Step("x", ("in.a",)), Step("y", ("in.b", "x"))),
                  Artifact("art", ("x", "y"), "in.a"), (Effect("ticket", receiver),), (Dependant("d", 12),),
                  "rb.toml")  # fmt: skip
    s = COMBINATIONS[0]
    trace, result = simulate(workflow_switches(wf, base=s), worked_example(s, wf))
    answers = [e.detail["answer"] for e in trace.events if e.kind.value == "feed"]
    assert result.posts_applied == posts and tuple(b for b in result.broken if b == "duplicate-effect") == broken
    assert ("found" in answers) == (receiver == "read-back")


def test_effects_go_in_order_one_a_tick_and_each_dependant_starts_by_its_own_rule() -> None:
    """code-change: the pull request, then the chat message a tick later, the attempt done after
    the last; research-brief's archive takes the latest finished brief by its own rule even when
    the rule switch says current-accepted."""
    from sim.model.workflow import workflow_switches
    from sim.engine.trace import Kind
    from sim.model.events import payload, Sent, Newsletter
    from sim.run import simulate

    s = COMBINATIONS[0]
    wf = files.load("code-change")
    trace, _ = simulate(workflow_switches(wf, base=s), worked_example(s, wf))
    sent = [(e.tick, payload(e, Sent)["effect"]) for e in trace.events if e.kind is Kind.SENT]
    assert [name for _, name in sent] == ["open-pull-request", "open-pull-request", "post-in-chat"]
    assert sent[-1][0] == sent[-2][0] + 1
    wf = files.load("research-brief")
    trace, _ = simulate(workflow_switches(wf, base=s), worked_example(s, wf))
    started = {payload(e, Newsletter)["dependant"]: e.tick for e in trace.events if e.kind is Kind.NEWSLETTER}
    assert started == {"weekly-digest": 16, "archive": 24}
    state = trace.state_at(trace.last_tick)
    assert [d.rule.value for d in state.setup.dependants] == ["current-accepted", "latest-finished"]


def test_a_workflows_own_receivers_and_rules_are_why_a_protection_on_does_not_hold() -> None:
    """The guard verdicts read the workflow's shape: with every protection on, code-change's
    chat (no key) leaves duplicate-effect unguarded and its rule switch still guards
    misused-dependant; research-brief's archive (its own latest-finished rule) leaves
    misused-dependant unguarded; the article's feed and newsletter leave both guarded."""
    from sim import properties
    from sim.model.switches import Switches
    from sim.model.workflow import workflow_switches

    article = Switches()
    code, brief = (workflow_switches(files.load(n)) for n in ("code-change", "research-brief"))
    assert properties.guarded(article, "duplicate-effect") and properties.guarded(article, "misused-dependant")
    assert not properties.guarded(code, "duplicate-effect") and properties.guarded(code, "misused-dependant")
    assert properties.unguarded_by(code, "duplicate-effect") == (
        "a receiver of the workflow does not deduplicate (no-key or read-back)")
    assert not properties.guarded(brief, "misused-dependant")
    assert properties.unguarded_by(brief, "misused-dependant") == (
        "a dependant takes the artifact by its own weaker rule (a workflow's)")
    notes = workflow_switches(files.load("release-notes"))  # a dedup service that forgets keys after 6 ticks
    assert properties.unguarded_by(notes, "duplicate-effect") == "a receiver of the workflow forgets keys (a finite retention)"


NO_DEPENDANT = """
name = "no-dependant"
description = "two steps, one effect, nothing downstream reads the artifact"
[[inputs]]
name = "r"
parts = ["p", "q"]
[[steps]]
name = "s-p"
reads = ["r.p"]
[[steps]]
name = "s-q"
reads = ["r.q"]
[artifact]
name = "art"
assembles = ["s-p", "s-q"]
figure = ["r.q"]
[[effects]]
name = "post"
receiver = "dedup"
"""


def test_a_workflow_with_no_dependant_has_no_newsletter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A workflow may declare no dependant (docs/workflows.md). Then nothing reads the artifact:
    misused-dependant cannot break and the rule is never needed (the engine ran the article's
    newsletter in its place, and the sweep reported the rule needed). The same workflow with one
    dependant breaks misused-dependant, so the check can fail."""
    path = tmp_path / "none.toml"
    path.write_text(NO_DEPENDANT, encoding="utf-8")
    wf = files.load(str(path))
    assert not wf.dependants
    assert "misused-dependant" not in _broken(wf, rule="latest-finished", pins="off")
    done = sweep(workflow=wf)
    assert done.summary["totals"]["invariants"]["misused-dependant"]["runs"] == 0
    needs = [n.to_json()["protections"] for n in done.needs]
    assert not any(n["rule"]["needed"] for n in needs if "rule" in n) and any("rule" in n for n in needs)
    assert main(["trace", "main", "--workflow", str(path)]) == 0
    out = capsys.readouterr().out
    assert "none (the workflow declares no dependant)" in out and "Newsletter" not in out
    path.write_text(NO_DEPENDANT + '[[dependants]]\nname = "reader"\nready = 6\n', encoding="utf-8")
    assert "misused-dependant" in _broken(files.load(str(path)), rule="latest-finished", pins="off")


def test_a_dependants_own_fail_open_gate_with_pins_off_is_an_expected_break(tmp_path: Path) -> None:
    """A dependant with its own fail-open gate and the rule from the switch admits as
    any-accepted when pins are off (docs/workflows.md), so the misused-dependant break it lets
    through is expected, whatever the gate switch says; with pins on it is not excused. (It was
    excused only for a dependant with a rule of its own, so `sim explore` called the break
    UNEXPECTED and exited 1.)"""
    from dataclasses import replace

    from sim.model.switches import Pins, Reader, Switches
    from sim.properties.misused_dependant import own_weaker_rule

    gated = replace(Switches(), dependants=(Reader("dep", 12, gate="fail-open"),))
    assert own_weaker_rule(replace(gated, pins=Pins.OFF))
    assert not own_weaker_rule(gated)
    assert not own_weaker_rule(replace(Switches(), pins=Pins.OFF, dependants=(Reader("dep", 12),)))
    path = tmp_path / "gated.toml"
    path.write_text(NO_DEPENDANT + '[[dependants]]\nname = "dep"\nready = 12\ngate = "fail-open"\n', encoding="utf-8")
    args = ["explore", "--workflow", str(path), "--seed", "1", "-n", "2000", "--set", "pins=off",
            "--set", "gate=fail-closed", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == 0


def test_a_knob_set_back_to_the_articles_value_on_a_workflow_is_kept_by_every_replay(tmp_path: Path) -> None:
    """code-change declares the assessor `figures`; `--set assessor=form` runs it with `form`,
    the article's default. Every replay must say so (it was dropped, being the article's
    default, so each replay ran `figures`): the trace's replay command, the rerun line of
    `sim explore`, and a counterexample file, which loads back with `form` and replays."""
    from sim import scenario
    from sim.analysis.explore import ExploreBounds, rerun_args
    from sim.commands.trace import replay_command
    from sim.model.workflow import workflow_switches
    from sim.run import counterexample

    wf = files.load("code-change")
    set_back = workflow_switches(wf, {"assessor": "form"})
    assert set_back.knob("assessor") == "form" and workflow_switches(wf).knob("assessor") == "figures"
    main_on = scenario.load("main").with_workflow(wf)
    assert replay_command(main_on.with_switches({"assessor": "form"})) == "sim trace main --workflow code-change --set assessor=form"
    assert replay_command(main_on) == "sim trace main --workflow code-change"
    assert rerun_args(set_back, 5, 10, ExploreBounds(workflow="code-change")).endswith("--workflow code-change --set assessor=form")
    assert "--set" not in rerun_args(workflow_switches(wf), 5, 10, ExploreBounds(workflow="code-change"))
    path = tmp_path / "back.toml"
    path.write_text(counterexample("set back", set_back, worked_example(set_back, wf), "code-change"), encoding="utf-8")
    loaded = scenario.load(str(path))
    assert loaded.switches.knob("assessor") == "form"
    assert main(["trace", str(path), "--check"]) == 0


def test_a_report_change_on_a_workflow_touches_only_steps_some_change_of_its_parts_reaches(tmp_path: Path) -> None:
    """On release-notes (notes reads the two summaries, each of its own part), a change of a
    part reaches its summary and the notes: a change of the first summary alone cannot happen.
    The loader refuses it in a scenario file, `sim check` offers only the sets a change of some
    parts gives (it offered every set, and wrote counterexamples no change gives), and `sim
    explore` draws only those; a workflow whose steps each read a part of their own (digest)
    keeps every set, as the article does."""
    import random

    from sim.analysis.explore import SeededChoices, draw_schedule, for_workflow, ExploreBounds
    from sim.model.faults import ReportChange
    from sim.model.schedule import workflow_setting
    from sim import scenario

    wf = files.load("release-notes")
    setting = workflow_setting(wf)
    assert setting.change_atoms == ((1, 3), (2, 3))
    assert workflow_setting(files.load("digest")).change_atoms == ()
    path = tmp_path / "rn.toml"
    path.write_text('workflow = "release-notes"\n[schedule]\nchanges = [{at = 12, sections = [1]}]\n', encoding="utf-8")
    assert main(["trace", str(path)]) == 2
    path.write_text('workflow = "release-notes"\n[schedule]\nchanges = [{at = 12, sections = [1, 3]}]\n', encoding="utf-8")
    assert scenario.load(str(path)).schedule.of(ReportChange) == (ReportChange(12, (1, 3)),)
    offered = {f.sections for f in ReportChange.offers((), 3, (3,), 12, setting)}  # type: ignore[attr-defined]
    assert offered == {(1, 3), (2, 3), (1, 2, 3)}
    bounds = for_workflow(ExploreBounds(), wf, "release-notes")
    choices = SeededChoices(random.Random(5))
    drawn = [f.sections for _ in range(400) for f in draw_schedule(choices, bounds).of(ReportChange)]
    assert drawn and set(drawn) <= offered and len(set(drawn)) > 1
    out = tmp_path / "check"
    assert main(["check", "--workflow", "release-notes", "-k", "1", "-t", "12", "-p", "each", "-j", "1",
                 "--out", str(out)]) in (0, 1)  # fmt: skip
    changes = [c.sections for p in out.glob("*.toml") for c in scenario.load(str(p)).schedule.of(ReportChange)]
    assert changes and set(changes) <= offered
