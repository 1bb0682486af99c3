"""Engine profiles (sim/model/profiles.py): data that names real settings with a source for each
claim, `sim profiles`, `--profile` on the commands, and `sim sweep --profile`."""

from __future__ import annotations

import json

import pytest

from sim.cli import main
from sim.analysis.profile_sweep import EVENTS, OWN, credit, engine_keeps, profile_rows, run_switches
from sim.model.profiles import PROFILES, get
from sim.properties import ARTICLE_NAMES
from sim.run import simulate
from sim.model.schedule import worked_example
from sim.model.switches import PROTECTIONS, Switches


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_each_profile_has_a_source_for_each_claim_and_adds_what_the_engine_lacks(profile) -> None:  # type: ignore[no-untyped-def]
    for claim in (*profile.engine, *profile.application):
        assert claim.why and claim.source, claim
    switches = profile.switches()
    lacking = {name for name, on in PROTECTIONS.items() if getattr(switches, name) is not on}
    assert {c.name for c in profile.missing()} == lacking
    # with every addition the run has all four protections on
    added = profile.switches({c.name: c.value for c in profile.missing()})
    assert added.protections_on() == tuple(PROTECTIONS)
    assert profile.runnable or "documentation only" in profile.note


def test_profiles_lists_every_profile_and_json_has_the_sources(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "profiles")
    assert code == 0 and all(p.name in out for p in PROFILES)
    code, out, _ = run_cli(capsys, "profiles", "dbos", "--json")
    (doc,) = json.loads(out)
    assert doc["name"] == "dbos" and {c["setting"] for c in doc["application"]} == {
        "pins=on", "key=per-operation", "rule=current-accepted"}  # fmt: skip
    assert all(c["source"] for c in doc["engine"])


def test_an_unknown_profile_is_one_line_exit_2_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "trace", "main", "--profile", "tempral")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "did you mean 'temporal'" in err


def test_trace_with_a_profile_runs_the_engines_settings_and_set_overrides_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "trace", "main", "--profile", "langgraph-sync", "--json")
    assert code == 0
    doc = json.loads(out)
    assert {k: doc["switches"][k] for k in ("fencing", "pins", "key", "rule")} == {
        "fencing": "off", "pins": "off", "key": "none", "rule": "latest-finished"}  # fmt: skip
    code, out, _ = run_cli(capsys, "trace", "main", "--profile", "langgraph-sync", "--set", "key=per-operation", "--json")
    assert json.loads(out)["switches"]["key"] == "per-operation"


def test_sweep_by_profile_counts_each_event_combination_as_the_runs_do() -> None:
    profile = get("temporal")
    rows = profile_rows(profile)
    assert [r.label for r in rows] == ["engine alone", *(f"+ {c.setting}" for c in profile.missing()), "+ all of them"]
    alone = rows[0]
    expected = dict.fromkeys(ARTICLE_NAMES, 0)
    for events in EVENTS:
        switches = profile.switches(events)
        _, result = simulate(switches, worked_example(switches))
        for name in result.broken:
            expected[name] += 1
    assert alone.broken == expected
    # all additions on: all four protections, which keep every invariant in every combination
    assert rows[-1].broken == dict.fromkeys(ARTICLE_NAMES, 0) and rows[-1].unfinished == 0
    # the engine alone keeps stale-write (its own fencing) and loses duplicate-effect (no key)
    assert "stale-write" in alone.keeps and "duplicate-effect" not in alone.keeps
    assert "duplicate-effect" in rows[[r.label for r in rows].index("+ key=per-operation")].keeps


@pytest.mark.parametrize(("knob", "beyond"), [("reads=next-section", "faithful-digest"),
                                              ("receiver=none", "uncorrected-duplicate")])
def test_sweep_by_profile_counts_an_invariant_beyond_the_article_that_a_knob_breaks(
        knob: str, beyond: str, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A knob under --set can break an invariant beyond the article's model, which no protection
    guards: every row counts it as its runs break it (counted here from the runs themselves), the
    rows that break it do not keep it, and the table and --json show it (it was dropped, so that
    "+ all of them" read as keeping everything)."""
    profile = get("temporal")
    name, value = knob.split("=")
    rows = profile_rows(profile, {name: value})
    for r in rows:
        expected = dict.fromkeys(r.broken, 0)
        for switches in run_switches(profile, r.adds, {name: value}):
            _, result = simulate(switches, worked_example(switches))
            for broken in result.broken:
                expected[broken] += 1  # a KeyError here: an invariant the row does not count
        assert r.broken == expected, r.label
    assert rows[-1].label == "+ all of them" and rows[-1].broken[beyond] > 0 and beyond not in rows[-1].keeps
    code, out, _ = run_cli(capsys, "sweep", "--profile", "temporal", "--set", knob)
    assert code == 0 and beyond in out and max(len(line) for line in out.splitlines()) <= 80
    code, out, _ = run_cli(capsys, "sweep", "--profile", "temporal", "--set", knob, "--json")
    assert json.loads(out)["rows"][-1]["broken"][beyond] == rows[-1].broken[beyond]


def test_sweep_by_profile_prints_what_the_engine_keeps(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "sweep", "--profile", "temporal")
    assert code == 0
    assert "the engine alone keeps: stale-write, two-acceptances" in out
    assert "+ key=per-operation: also keeps duplicate-effect" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    code, out, _ = run_cli(capsys, "sweep", "--profile", "temporal", "--json")
    assert json.loads(out)["rows"][0]["label"] == "engine alone"
    code, _, err = run_cli(capsys, "sweep", "--profile", "temporal", "--set", "change=never")
    assert code == 2 and "change" in err


def test_check_with_a_profile_checks_the_engine_alone_and_each_addition(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli(capsys, "check", "--profile", "dbos", "-p", "each", "-k", "0", "-t", "4", "--json",
                           "--out", str(tmp_path / "out"))  # fmt: skip
    doc = json.loads(out)
    dbos = get("dbos")
    assert doc["bound"]["switches"] == {k: v for k, v in dbos.switches().as_dict().items()
                                        if k not in ("silent", "change", "post_death", "checkpoints")}  # fmt: skip
    labels = [r["protections"] for r in doc["results"]]
    assert len(labels) == 1 + len(dbos.missing()) and labels[0] == "pins=off+key=none+rule=latest-finished"
    assert labels[1:] == ["key=none+rule=latest-finished", "pins=off+rule=latest-finished", "pins=off+key=none"]


# -- the engine behaviours (knobs beyond the article) ----------------------------------------------
def events_of(trace, kind, attempt=None):  # type: ignore[no-untyped-def]
    return [e for e in trace.events if e.kind is kind and (attempt is None or e.attempt == attempt)]


def test_a_zombie_from_memory_computes_what_the_article_s_zombie_restores() -> None:
    from sim.run import run_scenario
    from sim.scenario import load
    from sim.engine.trace import Kind

    article, _ = run_scenario(load("main").with_switches({"fencing": "off"}))
    zombie, outcome = run_scenario(load("zombie-from-memory"))
    # the article's woken #1 restores s4, which #2 computed; from memory it computes s4 itself
    assert [(e.tick, e.detail["step"]) for e in events_of(article, Kind.RESTORED, 1)] == [(9, 4)]
    assert events_of(zombie, Kind.RESTORED, 1) == []
    assert [(e.tick, e.detail["step"]) for e in events_of(zombie, Kind.COMPUTED, 1)][-1] == (9, 4)
    assert outcome.model_calls == 7 and outcome.stale_writes_applied == 3


def test_step_fencing_discards_a_replaced_worker_s_result_and_gives_it_no_further_step() -> None:
    from sim.run import run_scenario
    from sim.scenario import load
    from sim.engine.trace import Kind

    article, article_outcome = run_scenario(load("main-end-only"))
    stepped, outcome = run_scenario(load("step-fencing"))
    assert [e.tick for e in events_of(article, Kind.FENCED, 1)] == [10]
    assert [e.tick for e in events_of(stepped, Kind.FENCED, 1)] == [8]
    assert [e for e in events_of(stepped, Kind.WRITE, 1) if e.tick >= 8] == []
    assert (article_outcome.model_calls, outcome.model_calls) == (8, 7)
    assert outcome.stale_writes_rejected == 0 and outcome.broken == ()


def test_fencing_by_owner_agrees_with_fencing_by_token_while_epochs_are_never_reused() -> None:
    """Every admission publishes a new epoch, so in all 864 runs of the sweep the owner check
    refuses exactly the writes the token check refuses."""
    from sim.model.switches import COMBINATIONS

    for switches in COMBINATIONS:
        _, token = simulate(switches, worked_example(switches))
        owner_switches = switches.with_values({"fencing_by": "owner"})
        _, owner = simulate(owner_switches, worked_example(owner_switches))
        assert owner == token, switches.label()


def test_a_fenced_worker_that_adopts_returns_the_first_outcome_and_changes_nothing_else() -> None:
    from sim.run import run_scenario
    from sim.scenario import load
    from sim.engine.trace import Kind

    article, article_outcome = run_scenario(load("main"))
    adopts, outcome = run_scenario(load("fenced-adopts"))
    # fenced at t8 as in the article; it returns #3's confirmed announcement at t14, when #3 is done
    assert [e.tick for e in events_of(adopts, Kind.FENCED, 1)] == [8]
    assert [(e.tick, e.detail) for e in events_of(adopts, Kind.ADOPTED)] == [(14, {"owner": 3, "digest": "d2"})]
    assert [e.tick for e in events_of(adopts, Kind.DONE, 3)] == [14]
    # nothing else differs: the same events but the adoption, the same outcome
    assert [e for e in adopts.events if e.kind is not Kind.ADOPTED] == list(article.events)
    assert outcome == article_outcome
    # one fenced after the outcome is recorded returns it at once (sim conform's DBOS zombie)
    late, _ = run_scenario(load("conform-zombie").with_switches({"fenced_end": "adopts"}))
    fenced, adopted = events_of(late, Kind.FENCED, 1), events_of(late, Kind.ADOPTED, 1)
    assert [e.tick for e in fenced] == [e.tick for e in adopted] == [11]
    assert adopted[0].detail["owner"] == 2
    # fencing off: nobody is fenced, nobody adopts
    off, _ = run_scenario(load("main").with_switches({"fencing": "off", "fenced_end": "adopts"}))
    assert events_of(off, Kind.ADOPTED) == []


def test_retries_cost_one_model_call_per_step_timeout_passed_while_paused_and_at_most_n() -> None:
    from sim.run import run_scenario
    from sim.scenario import load
    from sim.engine.trace import Kind

    article, article_outcome = run_scenario(load("main"))
    retried, outcome = run_scenario(load("step-retries"))
    # paused inside s3's call from t3 to t8 with a 2-tick timeout: two re-deliveries, run at the wake
    redone = [e for e in events_of(retried, Kind.COMPUTED, 1) if e.detail.get("retry")]
    assert [(e.tick, e.detail["step"], e.detail["retry"]) for e in redone] == [(8, 3, 1), (8, 3, 2)]
    assert outcome.model_calls == article_outcome.model_calls + 2
    assert outcome.broken == article_outcome.broken == ()
    # at most N: one retry allowed, one run
    capped, _ = run_scenario(load("main").with_switches({"retries": "1"}))
    assert len([e for e in events_of(capped, Kind.COMPUTED, 1) if e.detail.get("retry")]) == 1
    # a longer pause, more timeouts: conform-zombie pauses #1 from t3 to t11 (four timeouts)
    longer, _ = run_scenario(load("conform-zombie").with_switches({"retries": "9"}))
    assert len([e for e in events_of(longer, Kind.COMPUTED, 1) if e.detail.get("retry")]) == 4
    # a crashed worker never runs them; a worker paused outside a model call has none
    crashed, _ = run_scenario(load("main").with_switches({"retries": "9", "silent": "crashed"}))
    assert [e for e in events_of(crashed, Kind.COMPUTED) if e.detail.get("retry")] == []
    posting, _ = run_scenario(load("paused-inside-effect").with_switches({"retries": "9"}))
    assert [e for e in events_of(posting, Kind.COMPUTED) if e.detail.get("retry")] == []


@pytest.mark.parametrize("knob", ["zombie=from-memory", "fencing_scope=step", "fencing_by=owner", "fenced_end=adopts",
                                  "retries=2"])
def test_check_under_an_engine_knob_agrees_with_the_enumerator(knob: str) -> None:
    from sim.analysis.check import enumerator
    from sim.analysis.check.check import CheckBound, check, configurations
    from sim.model.switches import Checkpoints

    name, value = knob.split("=")
    rows = configurations(Switches().with_values({name: value}), "fencing=off,all-on",
                          [Checkpoints.PER_STEP, Checkpoints.END_ONLY])  # fmt: skip
    bound = CheckBound(1, 9)
    for searched, walked in zip(check(rows, bound), enumerator.enumerate_all(rows, bound)):
        assert (searched.schedules, searched.violations) == (walked.schedules, walked.violations)
        assert searched.counterexamples == walked.counterexamples


def test_a_bad_knob_value_is_one_line_naming_the_allowed_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "trace", "main", "--set", "zombie=sometimes")
    assert code == 2 and err.count("\n") == 1
    assert "knob 'zombie' has no value 'sometimes'; allowed: rereads, from-memory" in err


def test_the_readme_table_of_what_each_engine_keeps_alone_is_what_the_sweep_says() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("### Your engine: profiles")
    section = readme[start:readme.index("\n#", start + 1)]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| `")]
    assert rows, "the README's profile table is missing"
    for names, keeps in rows:
        said = {k.strip() for k in keeps.split(",")} - {"none"}
        for name in [n.strip(" `") for n in names.split(",")]:
            full = name if name in [p.name for p in PROFILES] else f"langgraph{name}"
            assert set(engine_keeps(get(full))) == said, full


# -- issue 22, defect 8: what the engine does, and what the sweep credits it with -----------------
def test_step_functions_runs_a_redrive_on_its_input_and_is_not_credited_with_the_acceptance_check() -> None:
    """Redrive reruns the execution's own input and keeps the successful steps by step (AWS's
    RedriveExecution page; the companion, section 10); it does not pin content or reuse a step
    across versions, and the acceptance check is the application's. So the engine's settings
    leave pins off, its sweep does not credit it with wrong-acceptance, and the application's
    pins=on (with its acceptance check) does."""
    from sim.run import run_scenario
    from sim.scenario import load
    from sim.engine.trace import Kind

    sfn = get("step-functions")
    assert sfn.settings()["pins"] == "off" and "pins=on" in [c.setting for c in sfn.missing()]
    trace, _ = run_scenario(load("main").with_switches(sfn.settings()))
    # no attempt is pinned to a version, so no step computed under v1 is restored into a run pinned to v2
    assert all(e.detail.get("pin") is None for e in trace.events if e.kind is Kind.ADMITTED)
    rows = profile_rows(sfn)
    assert "wrong-acceptance" not in engine_keeps(sfn, rows)
    assert "+ pins=on: also keeps wrong-acceptance" in credit(sfn, rows)


def test_a_pins_claim_whose_acceptance_check_is_the_application_s_says_so() -> None:
    """With pins on the model's assessor also compares each part's section hash with the current
    report. Every profile here leaves the acceptance step to the application (rule=current-accepted
    is among what it adds), so an engine claiming pins=on must declare that part as the
    application's, and the sweep must not credit the engine with what only that part keeps."""
    for p in PROFILES:
        pins = next((c for c in p.engine if c.name == "pins"), None)
        if pins is None or pins.value != "on":
            continue
        assert "rule=current-accepted" in [c.setting for c in p.missing()], p.name
        assert pins.application_part, f"{p.name}: pins=on includes the application's acceptance check"
        rows = profile_rows(p)
        assert [r.label for r in rows][:2] == ["engine alone", OWN]
        assert "wrong-acceptance" in rows[0].keeps and "wrong-acceptance" not in engine_keeps(p, rows)
        assert any(line.startswith("with the application's part (pins=on: the acceptance check)") and
                   "wrong-acceptance" in line for line in credit(p, rows))  # fmt: skip


def test_every_claim_cites_the_page_that_states_it() -> None:
    """Each part of a claim's source is an address, a section of the technical companion, a
    section of this project's docs (the file and its heading exist), or the committed report
    a conformance run wrote."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for p in PROFILES:
        for claim in (*p.engine, *p.missing()):
            for part in claim.source.split("; "):
                doc = re.match(r'(docs/[\w.-]+\.md), "([^"]+)"', part)
                if doc:
                    text = (root / doc[1]).read_text(encoding="utf-8")
                    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
                    assert any(h.startswith(doc[2]) for h in headings), f"{p.name} {claim.setting}: {part}"
                    continue
                assert (part.startswith("https://") or re.match(r"technical companion §\d+", part)
                        or part.startswith("reports/conformance.json")), f"{p.name} {claim.setting}: {part!r} names no page"  # fmt: skip


def test_only_a_protection_turned_on_may_name_an_application_part(monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.model import profiles as profiles_mod
    from sim.model.profiles import Claim, Profile

    bad = Profile("bad", "bad", (Claim("fencing=off", "why", "technical companion §7", application_part="x"),), ())
    monkeypatch.setattr(profiles_mod, "PROFILES", (bad,))
    with pytest.raises(ValueError, match="fencing=off is no protection turned on"):
        profiles_mod._validate()


def test_each_rows_calls_and_columns_are_those_of_its_twelve_runs_traced_one_by_one(
        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The profile sweep's model-calls column is the sum over a row's 12 runs, and a broken
    invariant beyond the article's is a column when any row breaks it: each checked against
    `sim trace` of the 12 runs one by one (another path through the CLI)."""
    from itertools import product

    from sim.model.switches import FAULT_SWITCHES, SWITCHES

    sets = ["--set", "reads=next-section-keyed"]
    code, out, _ = run_cli(capsys, "sweep", "--profile", "temporal", *sets, "--json")
    assert code == 0
    rows = {r["label"]: r for r in json.loads(out)["rows"]}
    calls, broken = 0, set()
    for values in product(*(list(SWITCHES[name]) for name in FAULT_SWITCHES)):
        events = [a for name, v in zip(FAULT_SWITCHES, values) for a in ("--set", f"{name}={v.value}")]
        code, out, _ = run_cli(capsys, "trace", "main", "--profile", "temporal", *sets, *events, "--json")
        assert code == 0
        outcome = json.loads(out)["outcome"]
        calls += outcome["model_calls"]
        broken |= {v["invariant"] for v in outcome["violations"]}
    assert rows["engine alone"]["model_calls"] == calls
    assert "faithful-digest" in broken  # beyond the article's: a column of the table
    assert set(rows["engine alone"]["broken"]) >= broken
    assert all(set(r["broken"]) == set(rows["engine alone"]["broken"]) for r in rows.values())
