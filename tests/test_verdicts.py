"""Verdicts scoped to the settings (issue 22, defects 2 and 6, "a verdict names what it
judged"): `sim check` and `sim explore` judge every property the settings and the fault kinds
they enumerate can break, name the ones they leave out, and a knob the other settings make
inert is reported on stderr (and in `--json`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from sim import properties
from sim.cli import main
from sim.analysis.explore import ExploreBounds, SeededChoices, draw_schedule
from sim.model.faults import KINDS, effects_of, selected
from sim.model.knobs import KNOBS
from sim.run import simulate
from sim.model.switches import Switches

ARTICLE = selected("article")


def check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code = main(["check", "-j", "1", "--json", "--out", str(tmp_path / "out"), *args])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def row(doc: dict, protections: str = "all-on", checkpoints: str = "per-step") -> dict:  # type: ignore[type-arg]
    return next(r for r in doc["results"] if r["protections"] == protections and r["checkpoints"] == checkpoints)


# -- defect 2: a verdict covers every property the settings can break -------------------------
def test_check_judges_faithful_digest_where_an_undeclared_read_breaks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sim check -k 1 -t 8 --set reads=next-section` said "holds within the bound" with the
    article's faults: faithful-digest was judged only with --faults all, yet "section 2
    changes at t1" in that bound breaks it at t10."""
    code, doc, _ = check_json(tmp_path, capsys, "-k", "1", "-t", "8", "--set", "reads=next-section")
    assert code == 1, "all-on breaks"
    for mode in ("per-step", "end-only"):
        result = row(doc, checkpoints=mode)
        assert "faithful-digest" in result["judged"] and result["not_judged"] == []
        assert result["verdict"] == "broken" and result["violations"]["faithful-digest"] > 0
    path = Path(row(doc)["counterexamples"]["faithful-digest"])
    assert "faithful-digest breaks at t10" in path.read_text() and "the report changes at t1 (section 2)" in path.read_text()
    assert main(["trace", str(path), "--check"]) == 0


def test_check_judges_uncorrected_duplicate_with_the_feeds_knob_and_the_articles_faults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A receiver with no idempotency makes a delivery twice two posts up: the article's own
    fault kinds reach uncorrected-duplicate, so it is judged without --faults all."""
    code, doc, _ = check_json(tmp_path, capsys, "-k", "1", "-t", "8", "--set", "receiver=none")
    assert code == 1
    result = row(doc)
    assert "uncorrected-duplicate" in result["judged"] and result["violations"]["uncorrected-duplicate"] > 0


def test_the_article_check_names_what_it_left_out_on_the_verdicts_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The article's faults cannot break faithful-digest, which other kinds can: each row's
    verdict says it was not judged, in the table (80 columns), the JSON and the files."""
    assert main(["check", "-k", "1", "-t", "4", "-j", "1", "-p", "each", "--out", str(tmp_path / "t")]) == 0
    lines = capsys.readouterr().out.split("\n\n")[0].splitlines()  # the table (then the files, the bound)
    assert max(len(line) for line in lines) <= 80
    rows = [i for i, line in enumerate(lines) if line.startswith(("all-on", "fencing=off"))]
    for i in rows:  # the verdict cell goes on under the verdict column: "holds within the bound; not judged: ..."
        assert lines[i].endswith(("holds within the bound;", "broken;"))
        assert lines[i + 1].strip() == "not judged: faithful-digest"
        assert lines[i + 1].index("not") == lines[i].rindex(lines[i].split("  ")[-1])
    assert any(line.startswith("not judged: faithful-digest") for line in lines)
    text = (tmp_path / "t" / "fencing=off.per-step.stale-write.toml").read_text()
    assert "fault kinds enumerated: silences, report changes, poster deaths, duplicate deliveries" in text
    assert "not judged: faithful-digest" in text and "judged: duplicate-effect, misused-dependant" in text


def test_with_every_fault_kind_nothing_is_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc, _ = check_json(tmp_path, capsys, "-k", "0", "--faults", "all")
    assert doc["bound"]["fault_kinds"] == [kind.check_name for kind in KINDS]
    assert all(r["not_judged"] == [] and "faithful-digest" in r["judged"] for r in doc["results"])


def test_explore_names_the_kinds_drawn_and_what_it_did_not_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", "--seed", "1", "-n", "200", "--set", "reads=next-section", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 invariant(s) broken in 200 schedules: faithful-digest" in out
    assert "fault kinds drawn: silences, report changes, poster deaths, duplicate deliveries" in out
    written = next(tmp_path.glob("*.toml")).read_text()
    assert "fault kinds drawn: silences, report changes" in written and "faithful-digest, misused-dependant" in written
    assert main(["explore", "--seed", "1", "-n", "50", "--out", str(tmp_path / "plain")]) == 0
    assert "no invariant broken in 50 schedules; not judged: faithful-digest" in capsys.readouterr().out


def settings_to_try() -> list[Switches]:
    """The article's switches with each knob value, pins on and off."""
    out = []
    for name, knob in KNOBS.items():
        for value in knob.values:
            for pins in ("on", "off"):
                out.append(Switches().with_values({name: value, "pins": pins}))
    return out


@pytest.mark.parametrize("switches", settings_to_try(), ids=lambda s: s.label() or "article")
def test_a_property_is_never_broken_by_faults_its_declaration_says_cannot_reach_it(switches: Switches) -> None:
    """The declarations may over-approximate, never under-approximate: in drawn schedules of
    every kind, what breaks is judged over the kinds of the faults that took effect."""
    rng = SeededChoices(random.Random(7))
    bounds = ExploreBounds(faults="all", max_faults=3)
    for _ in range(60):
        trace, result = simulate(switches, draw_schedule(rng, bounds))
        fired = {type(f) for f in trace.schedule.faults if f in set(trace.fired)}
        judged = {p.name for p in properties.judged(switches, fired)}
        assert set(result.broken) <= judged, (switches.label(), trace.schedule)


def test_not_judged_is_what_every_kind_reaches_and_these_kinds_do_not() -> None:
    article = Switches()
    assert [p.name for p in properties.not_judged(article, ARTICLE)] == ["faithful-digest"]
    assert properties.not_judged(article, KINDS) == ()
    reads = article.with_values({"reads": "next-section"})
    assert properties.not_judged(reads, ARTICLE) == ()
    feed = article.with_values({"receiver": "none"})
    assert "uncorrected-duplicate" in {p.name for p in properties.judged(feed, ARTICLE)}
    assert "uncorrected-duplicate" not in {p.name for p in properties.judged(article, KINDS)}, "judged only off the article's feed"


# -- defect 6: settings that silently do nothing ----------------------------------------------
def one_line(err: str) -> str:
    """Notes as one line each: a note is wrapped at 80 columns, going on after 4 spaces."""
    return err.replace("\n    ", " ")


RESTART_NOTE = ("controller_state=no-epoch has no effect: no fault kind enumerated restarts the controller "
                "(add --faults all)")  # fmt: skip


def test_check_notes_a_controller_state_with_no_restart_to_act_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc, err = check_json(tmp_path, capsys, "-k", "1", "-t", "4", "--set", "controller_state=no-epoch")
    assert code == 0
    assert one_line(err).splitlines()[0] == f"sim: note: {RESTART_NOTE}"
    assert doc["notes"] == [RESTART_NOTE]
    assert main(["check", "-k", "1", "-t", "4", "-j", "1", "--set", "controller_state=no-epoch",
                 "--out", str(tmp_path / "text")]) == 0  # fmt: skip
    assert f"sim: note: {RESTART_NOTE}\n" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("setting", ["fencing_scope=step", "fencing_by=owner", "fenced_end=adopts"])
def test_a_fencing_knob_with_fencing_off_is_noted(
    setting: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, doc, err = check_json(tmp_path, capsys, "-k", "0", "--set", "fencing=off", "--set", setting)
    note = f"{setting} has no effect: with fencing=off"
    assert len(doc["notes"]) == 1 and doc["notes"][0].startswith(note) and doc["notes"][0].endswith("(set fencing=on)")
    assert one_line(err).startswith(f"sim: note: {note}")
    assert main(["trace", "stale-write", "--set", setting, "--json"]) == 0  # stale-write: fencing off
    out, err = capsys.readouterr()
    assert json.loads(out)["notes"] == doc["notes"] and one_line(err) == f"sim: note: {doc['notes'][0]}\n"
    assert main(["diff", "stale-write", "--set", setting, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == doc["notes"]


def test_a_keyed_read_with_pins_off_is_noted_as_the_undeclared_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "undeclared-read-keyed", "--set", "pins=off", "--no-color"]) == 0
    err = capsys.readouterr().err
    assert one_line(err) == ("sim: note: reads=next-section-keyed has no effect beyond reads=next-section: with pins=off "
                   "a journal key names no section, so it cannot name the next one either (set pins=on)\n")  # fmt: skip


def test_explore_and_the_profile_sweep_note_an_inert_knob(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--seed", "1", "-n", "10", "--set", "replay=strict", "--out", str(tmp_path)]) == 0
    assert ("sim: note: replay=strict has no effect: no fault kind drawn changes the code (add --faults all)"
            in one_line(capsys.readouterr().err))  # fmt: skip
    assert main(["sweep", "--profile", "temporal", "--set", "controller_state=old-timers", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["notes"] == [
        "controller_state=old-timers has no effect: no fault kind in the sweep's runs (the worked example's faults) "
        "restarts the controller"
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["trace", "main", "--set", "reads=next-section"],
        ["trace", "main", "--set", "fencing_scope=step"],  # fencing is on in main
        ["trace", "controller-restart", "--set", "controller_state=no-epoch"],  # it has a restart
        ["check", "-k", "0", "--set", "controller_state=no-epoch", "--faults", "all"],
        ["check", "-k", "0", "--set", "reads=next-section-keyed"],  # pins on
    ],
)
def test_a_setting_that_acts_prints_no_note(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["-j", "1", "--json", "--out", str(tmp_path)] if args[0] == "check" else ["--no-color"]
    main([*args, *extra])
    out, err = capsys.readouterr()
    assert "note" not in err
    if args[0] == "check":
        assert json.loads(out)["notes"] == []


# -- the inert declarations are true --------------------------------------------------------
def inert_cases() -> list[tuple[str, str, Switches, Switches]]:
    """(knob, value, switches with the value, switches it then acts as) for each declaration."""
    cases = []
    for name, knob in KNOBS.items():
        for rule in knob.inert:
            base = Switches().with_values(dict([rule.switch])) if rule.switch is not None else Switches()
            for value in rule.values:
                cases.append((name, value, base.with_values({name: value}),
                              base.with_values({name: rule.same_as or knob.default})))  # fmt: skip
    return cases


@pytest.mark.parametrize("case", inert_cases(), ids=lambda c: f"{c[0]}={c[1]}")
def test_a_knob_declared_inert_changes_no_event(case: tuple[str, str, Switches, Switches]) -> None:
    """Under its declared condition the value's runs are event for event those of the value
    it acts as (the default, or `same_as`), over drawn schedules of every kind whose effects
    leave the condition in force."""
    name, value, switches, same = case
    rule = next(r for r in KNOBS[name].inert if value in r.values)
    rng = SeededChoices(random.Random(3))
    bounds = ExploreBounds(faults="all", max_faults=3)
    tried = 0
    while tried < 80:
        schedule = draw_schedule(rng, bounds)
        if not rule.holds(switches.as_dict(), effects_of(type(f) for f in schedule.faults)):
            continue
        tried += 1
        assert simulate(switches, schedule)[0].events == simulate(same, schedule)[0].events, schedule
