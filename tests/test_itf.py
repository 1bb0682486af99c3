"""`sim trace --format itf`: Apalache's Informal Trace Format, one state per tick."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from sim import scenario as scenarios
from sim.cli import cli
from sim.commands.common import load_scenario
from sim.render import itf
from sim.run import run_scenario, simulate
from sim.model.schedule import worked_example
from sim.model.switches import COMBINATIONS


def doc_of(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["trace", *args, "--format", "itf"], standalone_mode=False)
    assert result.exception is None, result.exception
    assert result.return_value == 0
    doc: dict[str, Any] = json.loads(result.output)  # one JSON document and nothing else
    return doc


def n(value: Any) -> int:
    """An ITF integer."""
    assert set(value) == {"#bigint"}
    return int(value["#bigint"])


def as_map(value: Any) -> dict[Any, Any]:
    assert set(value) == {"#map"}
    return {json.dumps(k, sort_keys=True): v for k, v in value["#map"]}


@pytest.fixture(scope="module")
def main() -> dict[str, Any]:
    return doc_of("main")


def test_document_structure(main: dict[str, Any]) -> None:
    assert set(main) == {"#meta", "vars", "states"}
    meta = main["#meta"]
    assert meta["format"] == "ITF"
    assert meta["format-description"] == "https://apalache-mc.org/docs/adr/015adr-trace.html"
    assert meta["source"].endswith("main.toml")
    assert meta["switches"]["pins"] == "on"
    assert main["vars"] == list(itf.VARS)
    assert len(main["states"]) == 15  # t0..t14, one state per tick
    for i, state in enumerate(main["states"]):
        assert state["#meta"] == {"index": i}
        assert set(state) == {"#meta", *itf.VARS}
        assert n(state["tick"]) == i
    assert itf.problems(main) == []


def test_states_follow_the_story(main: dict[str, Any]) -> None:
    s = main["states"]
    assert n(s[0]["epoch"]) == 41 and n(s[0]["owner"]) == 1
    assert n(s[3]["report"]["version"]) == 1 and s[3]["report"]["revenue"] == "4.1"
    assert n(s[4]["report"]["version"]) == 2 and s[4]["report"]["revenue"] == "4.7"

    def one(i: int) -> Any:
        return as_map(s[i]["attempts"])[json.dumps({"#bigint": "1"})]

    assert one(3)["silent"] is True and one(3)["status"] == "running"
    assert one(5)["status"] == "UNKNOWN"
    assert n(s[5]["epoch"]) == 42 and n(s[5]["owner"]) == 2
    assert one(8)["status"] == "fenced"
    # the journal is keyed by (step, section content) with pins on: s2 of v1 and of v2
    keys = {tuple(n(x) for x in json.loads(k)["#tup"]) for k in as_map(s[8]["journal"])}
    assert keys == {(1, 0), (2, 0), (2, 1), (3, 0), (4, 0)}
    assert s[9]["candidates"][0]["digest"] == "d2" and s[9]["acceptances"] == []
    accepted = s[10]["acceptances"]
    assert [(a["digest"], n(a["version"]), n(a["tick"])) for a in accepted] == [("d2", 2, 10)]
    assert s[11]["feed"]["posts"] == [{"post": "P1", "digest": "d2"}]
    assert as_map(s[11]["effects"]) == {'"d2"': "intent"}
    assert s[12]["newsletter"]["started"] is True and s[12]["newsletter"]["quote"] == "4.7"
    assert s[11]["newsletter"]["ready"] is False and n(s[11]["newsletter"]["tick"]) == -1
    assert as_map(s[14]["effects"]) == {'"d2"': "confirmed"}
    assert len(s[14]["feed"]["posts"]) == 1
    assert n(s[14]["model_calls"]) == 6
    assert all(state["violations"] == {"#set": []} for state in s)
    assert "feed recognises the key and answers with the original post P1" in s[14]["events"]


def test_violations_accumulate_from_the_tick_they_broke() -> None:
    s = doc_of("versions-off")["states"]
    assert s[8]["violations"] == {"#set": []}
    assert s[9]["violations"] == {"#set": ["wrong-acceptance"]}
    assert s[-1]["violations"] == {"#set": ["misused-dependant", "wrong-acceptance"]}
    journal = as_map(s[8]["journal"])  # pins off: keyed by step name alone
    assert sorted(n(json.loads(k)) for k in journal) == [1, 2, 3, 4]


def test_until_cuts_the_states() -> None:
    doc = doc_of("main", "--until", "8")
    assert len(doc["states"]) == 9 and itf.problems(doc) == []


@pytest.mark.parametrize("name", scenarios.names())
def test_every_named_scenario_is_valid_itf(name: str) -> None:
    trace, _ = run_scenario(load_scenario(name, ()))
    doc = itf.document(trace)
    assert itf.problems(json.loads(json.dumps(doc))) == []
    assert len(doc["states"]) == trace.last_tick + 1


def test_a_sample_of_the_sweep_is_valid_itf() -> None:
    for switches in COMBINATIONS[::37]:
        trace, result = simulate(switches, worked_example(switches))
        doc = itf.document(trace)
        assert itf.problems(doc) == [], switches
        assert doc["states"][-1]["violations"] == {"#set": sorted(result.broken)}


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ([], "not a JSON object"),
        ({"vars": ["x"], "states": {}}, "states is not a list"),
        ({"vars": ["x"], "states": [{"#meta": {"index": 1}, "x": True}]}, "#meta.index is not 0"),
        ({"vars": ["x"], "states": [{"y": True}]}, "are not vars"),
        ({"vars": ["x"], "states": [{"x": 1.5}]}, "not an integer"),
        ({"vars": ["x"], "states": [{"x": 2**60}]}, "use #bigint"),
        ({"vars": ["x"], "states": [{"x": {"#bigint": "4x"}}]}, "bad #bigint"),
        ({"vars": ["x"], "states": [{"x": {"#map": [[1]]}}]}, "not a [key, value] pair"),
        ({"vars": ["x"], "states": [{"x": {"#set": [], "y": 1}}]}, "has other fields"),
        ({"vars": ["x"], "states": [{"x": {"#foo": 1}}]}, "unknown special field"),
        ({"vars": ["x"], "states": [{"x": None}]}, "not an ITF value"),
    ],
)
def test_problems_finds_what_is_not_itf(doc: Any, problem: str) -> None:
    found = itf.problems(doc)
    assert any(problem in p for p in found), found


@pytest.mark.parametrize("name", scenarios.names())
def test_the_stream_is_the_document_byte_for_byte(name: str) -> None:
    """`sim trace --format itf` writes the document one state at a time (bounded memory);
    the bytes are those of the whole document dumped at once."""
    import io

    loaded = scenarios.load(name)
    trace, _ = run_scenario(loaded)
    out = io.StringIO()
    itf.write(trace, out, source=loaded.source, description="d")
    assert out.getvalue() == json.dumps(itf.document(trace, source=loaded.source, description="d"), indent=2) + "\n"


def test_the_stream_holds_one_state_at_a_time() -> None:
    """The export never builds the whole document: what it allocates at its peak is a small
    part of what it writes (the 1,000-tick worst case is over 100 MB of JSON; docs/limits.md)."""
    import io
    import tracemalloc

    n = 10  # 10 attempts, each silent and replaced, and 10 changes of all 26 sections: about 100 ticks
    text = "\n".join([
        "[schedule]", "sections = 26", "horizon = 1000",
        "silences = [" + ", ".join(f"{{attempt = {i}, at = {3 + 9 * (i - 1)}, wake = {10 + 9 * (i - 1)}}}"
                                   for i in range(1, n + 1)) + "]",
        "changes = [" + ", ".join(f"{{at = {4 + 9 * i}, sections = [{', '.join(map(str, range(1, 27)))}]}}"
                                  for i in range(n)) + "]",
    ])  # fmt: skip
    trace, _ = run_scenario(scenarios.parse(text, "long.toml", "long"))

    class Sink(io.TextIOBase):
        written = 0

        def write(self, text: str) -> int:
            self.written += len(text)
            return len(text)

    sink = Sink()
    tracemalloc.start()
    try:
        itf.write(trace, sink)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.written > 0 and peak < sink.written / 3, (peak, sink.written)
