"""The canonical form of a state: what can still change a run's future or a verdict, and
nothing that only names its history (docs/check.md, "The canonical state").

`canonical(state)` is taken at the start of a tick (`state.tick`, before its input phase:
every actor has acted in every tick before it). Two states with equal canonical forms, given
the same faults from then on, produce the same events up to renaming of history-only names
(result ids, writers, ticks of past actions).

The form is derived, not written field by field: every field of `State`, `AttemptState` and
the records they hold declares beside its definition what the form keeps of it and why
(`sim.engine.keep`: kept, dropped as history, the same in every node of a level, a version
as its content, a tick relative to now, only whether it is set, a named form, or kept only
while a stated condition holds). This module applies the declarations: `PLANS` holds, for
each record type, one function per field that is not dropped, built once from the
declarations; a record's form is the tuple of their values, in field order. The irregular
forms (`FORMS`) are the ones a declaration names, each with its reason at the field:

- `silence`: a running silent attempt's silence, how long ago (a crashed one's counted from
  its last heartbeat heard), capped at the heartbeat
  limit (uncapped while a controller outage counts, and with `retries`); otherwise only
  whether it is silent, but with `retries` how long, uncapped, whatever its status (a paused
  worker's re-deliveries when it wakes count the step timeouts it was silent);
- `window`: an unheard window as (how long unheard, capped the same way; ticks until heard
  again, 0 once past), while it covers a tick to come or the last heartbeat of a silence
  (the count then runs from its start); otherwise none;
- `results`: an attempt's parts without their result ids, and with zombie=from-memory
  whether it has called the model (result ids are dropped, so this is kept apart);
- `accepted`: a verdict as whether it accepted;
- `remembered`: the feed's remembered keys without their tick (retention forever) or with
  their age capped at the retention;
- `readable`: the journal's records a restore can still match (`readable`);
- `outage`: a controller's latest outage, relative to now while it still counts.

`tests/test_canon.py` fails for a field with no declaration and checks each condition a
field is dropped under; `tests/test_differential.py` measures soundness against the search
with no merging and the schedule enumerator; `tests/test_search.py` runs merged states on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, cast, get_args, get_origin, get_type_hints

from sim.base.compiled import digest
from sim.engine.keep import AsContent, Before, Dropped, Form, IsSet, Keep, Kept, Nested, Relative, While, declarations
from sim.engine.records import Acceptance, Candidate, Feed, JournalRecord, Part, has_called
from sim.engine.state import AttemptState, State
from sim.engine.working import StatusMembers as Status  # its members compiled as constants (sim.engine.rules)

Canonical = tuple[Any, ...]

#: canonical forms of shared parts of states, by the identity of the part (states share the
#: parts a step did not change, so most lookups hit). Each entry keeps its part alive, so
#: an id is never reused while its entry stands; `trim` empties it when it grows large.
_memo: Final[dict[int, tuple[object, Any, Any, Any]]] = {}
MEMO_LIMIT: Final = 1 << 17

#: a silence longer than any run (the cap while a controller outage counts, or with retries)
UNCAPPED: Final = 1 << 30


def trim() -> None:
    """Empty the memo of shared parts if it has grown past MEMO_LIMIT entries (the search
    calls it after each level)."""
    if len(_memo) > MEMO_LIMIT:
        _memo.clear()


def forget() -> None:
    """Empty the memo of shared parts (the search calls it when it ends): its entries keep the
    parts of a search's states alive, up to a million objects the cyclic collector would
    otherwise scan at each collection after the search, and three times as the process ends
    (measured: 3 of the 8 s of `sim check -k 3 -t 8 -p all-on --set checkpoints=per-step -j 1`)."""
    _memo.clear()


class Now:
    """What the forms read besides the record: the tick, the state's versions (to name a
    version by its content), the silence cap, the setup, the outage's form, and the stamp
    the memo tells forms of different ticks (and caps) apart by."""

    __slots__ = ("limit", "outage", "setup", "stamp", "t", "versions")

    def __init__(self, state: State) -> None:
        t = state.tick
        self.t = t
        self.versions = state.versions
        self.setup = setup = state.setup
        limit = setup.heartbeat_limit
        stamp = t
        outage = state.outage
        if outage is not None:
            if t <= outage[1] + limit:
                outage = (outage[0] - t, outage[1] - t)
                limit, stamp = UNCAPPED, ~t  # the memo tells the two forms apart by the stamp
            else:
                outage = None
        if setup.retries:  # how long a paused worker has been silent sets its retries
            limit, stamp = UNCAPPED, ~t
        self.outage = outage
        self.limit = limit
        self.stamp = stamp


def canonical(state: State) -> Canonical:
    """The canonical form of a state at the start of its tick (see the module docstring)."""
    now = Now(state)
    return form_State(state, now) if AS_WRITTEN else STATE_FORM(state, now)


# -- the irregular forms, named by the declarations -------------------------------------------------
def silence(since: int | None, a: AttemptState, now: Now) -> int | bool:
    if since is None:
        return False
    if a.status is Status.RUNNING:
        # a crashed attempt: only when it is suspected matters, counted from its last
        # heartbeat heard (a delay's start if one covered its last heartbeat: `last_heard`)
        last = since if a.next_tick is not None else a.last_heard(now.t)
        assert last is not None
        return min(now.t - last, now.limit)
    if now.setup.retries:
        # a paused worker that wakes runs one re-delivery per step timeout it was silent
        # (`rules.wake`), whatever its status meanwhile: how long, uncapped
        return now.t - since
    return True


def window(unheard: tuple[int, int] | None, a: AttemptState, now: Now) -> tuple[int, int] | None:
    """(how long unheard, capped; ticks until heard again, 0 once past), kept while it covers
    a tick to come, or the last heartbeat of a silence (the count runs from its start then:
    `AttemptState.last_heard`); none otherwise."""
    if unheard is None:
        return None
    t, (start, until) = now.t, unheard
    since = a.silent_since
    if until > t or (since is not None and start < since < until):
        return (min(t - start, now.limit), max(until - t, 0))
    return None


def results(parts: tuple[Part | None, ...], a: AttemptState, now: Now) -> Any:
    form = tuple([None if p is None else part_form(p, now) for p in parts])
    if now.setup.rereads:
        return form
    return form, has_called(a.n, parts)


def accepted(verdict: tuple[bool, int] | None, a: AttemptState, now: Now) -> bool | None:
    return None if verdict is None else verdict[0]


def remembered(keys: tuple[tuple[str, str, str, int], ...], f: Feed, now: Now) -> Any:
    retention = f.retention
    if retention is None:
        return tuple((k, params, post) for k, params, post, _ in keys)
    t = now.t
    return tuple((k, params, post, min(t - since, retention)) for k, params, post, since in keys)


def outage(value: tuple[int, int] | None, s: State, now: Now) -> tuple[int, int] | None:
    return now.outage


def readable(journal: tuple[tuple[Any, JournalRecord], ...], s: State, now: Now) -> tuple[tuple[Any, ...], ...]:
    """The journal's records that a restore can still match, (key, record's form) sorted.
    With pins off every key can be read. With pins on a key names a section's content, and
    a restore looks up the content of the version its attempt is pinned to: the current
    version (every attempt admitted from now on) or a live attempt's pin; a content no
    longer among them never comes back (revisions only grow)."""
    if not s.setup.pins:
        return tuple(sorted([(key,) + journal_form(r, now) for key, r in journal]))
    versions = s.versions
    content = versions[s.version]
    pinned = [content]
    for a in s.attempts:
        if a.next_tick is not None and a.pin is not None and versions[a.pin] is not content:
            pinned.append(versions[a.pin])
    out: list[tuple[Any, ...]] = []
    for key, r in journal:
        step = cast("tuple[int, ...]", key)  # with pins on: (step, section content, extras...)
        i, c = step[0], step[1]
        for pin in pinned:
            if pin[i] == c:
                out.append((key,) + journal_form(r, now))
                break
    out.sort()
    return tuple(out)


def part_form(p: Part, now: Now) -> tuple[Any, ...]:
    """A part's form: the written one while it is in use (`AS_WRITTEN`), called by name."""
    return form_Part(p, now) if AS_WRITTEN else PART_FORM(p, now)


def journal_form(r: JournalRecord, now: Now) -> tuple[Any, ...]:
    """A journal record's form: the written one while it is in use (`AS_WRITTEN`), called by name."""
    return form_JournalRecord(r, now) if AS_WRITTEN else JOURNAL_FORM(r, now)


FORMS: Final[dict[str, Callable[[Any, Any, Now], Any]]] = {
    "silence": silence, "window": window, "results": results, "accepted": accepted,
    "remembered": remembered, "outage": outage, "readable": readable,
}  # fmt: skip


# -- applying the declarations (`keep.declarations`) -------------------------------------------------
def field_form(cls: type, i: int, keep: Keep, names: dict[str, Any], builders: list[str]) -> str | None:
    """The expression giving field i's form of record `r` from its declaration (None:
    dropped); the functions it calls go into `names`, helper functions into `builders`."""
    if isinstance(keep, Dropped):
        return None
    v = f"r[{i}]"
    if isinstance(keep, Kept):
        return v
    if isinstance(keep, Nested):
        tp = get_args(get_type_hints(cls, include_extras=True)[cls._fields[i]])[0]  # type: ignore[attr-defined]
        kinds = records_in(tp)
        if cls is not State or AttemptState in kinds:
            return typed(tp, v)
        # a part of the state, shared by the states a step did not change it in: remembered
        # by its identity (and the stamp, when a record in it reads the tick)
        build = f"build_{cls.__name__}_{i}"
        builders.append(f"def {build}(v: Any, now: Now) -> Any:\n    return {typed(tp, 'v')}\n")
        return f"shared({v}, now, {'now.stamp' if any(timed(k) for k in kinds) else 'None'}, {build})"
    if isinstance(keep, AsContent):
        return f"(None if {v} is None else now.versions[{v}])"
    if isinstance(keep, Relative):
        return f"(None if {v} is None else {v} - now.t)"
    if isinstance(keep, IsSet):
        return f"({v} is None)"
    if isinstance(keep, Before):
        w = f"r[{cls._fields.index(keep.other)}]"  # type: ignore[attr-defined]
        return f"({v} is None, None if {v} is None or {w} is None else {v} <= {w})"
    if isinstance(keep, Form):
        FORMS[keep.name]  # a form that does not exist fails here, at import
        return f"{keep.name}({v}, r, now)"
    if isinstance(keep, While):
        # the condition is a function of fields the form keeps, so the dropped branch's None
        # cannot make two records with different conditions equal
        # each condition is evaluated once per record, into a local named after it
        when = f"when_{keep.when.__name__}"
        names[when] = keep.when
        then = field_form(cls, i, keep.then, names, builders) or "None"
        otherwise = field_form(cls, i, keep.otherwise, names, builders) or "None"
        return f"({then} if {when}_ else {otherwise})"
    raise TypeError(f"{cls.__name__}.{cls._fields[i]}: no form for {keep!r}")  # type: ignore[attr-defined]


def typed(tp: Any, v: str, depth: int = 0) -> str:
    """The expression for a value `v` of type `tp` with each declared record in it by its
    form."""
    if not records_in(tp):
        return v
    if tp is AttemptState:
        return f"attempt({v}, now)"
    if isinstance(tp, type):
        return f"form_{tp.__name__}({v}, now)"
    args = get_args(tp)
    if get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis:
        x = f"x{depth}"
        return f"tuple([{typed(args[0], x, depth + 1)} for {x} in {v}])"
    if get_origin(tp) is tuple:
        return "(" + "".join(f"{typed(a, f'{v}[{k}]', depth + 1)}, " for k, a in enumerate(args)) + ")"
    others = [a for a in args if a is not type(None)]
    if len(others) == 1:  # Optional
        return f"(None if {v} is None else {typed(others[0], v, depth)})"
    return f"inside({v}, now)"


#: the namespace the forms made at import run in (`plan`): the named forms, the helpers, and each
#: record type's form as `form_<Type>` (looked up when called, so the order they are made in is free)
NAMESPACE: Final[dict[str, Any]] = {}


def plan_source(cls: type) -> tuple[str, dict[str, Any]]:
    """The source of a record type's form, `form_<Type>(r, now)`, made from its fields'
    declarations: one function that builds the tuple of the forms of the fields not dropped,
    in field order (made rather than looped over, so that the form costs what a hand-written
    one would); and the conditions it calls, by the names it calls them."""
    keeps = declarations(cls)
    names: dict[str, Any] = {}
    builders: list[str] = []
    exprs: list[str] = []
    groups: dict[str, list[str]] = {}  # the fields dropped under one condition, kept together
    for i, name in enumerate(cls._fields):  # type: ignore[attr-defined]
        keep = keeps[name]
        if isinstance(keep, While) and isinstance(keep.otherwise, Dropped):
            when = f"when_{keep.when.__name__}"
            names[when] = keep.when
            if when not in groups:
                groups[when] = []
                exprs.append(f"(({{{when}}}) if {when}_ else None)")
            groups[when].append(field_form(cls, i, keep.then, names, builders) or "None")
            continue
        exprs.append(field_form(cls, i, keep, names, builders) or "")
    exprs = [e.format(**{w: "".join(f"{g}, " for g in group) for w, group in groups.items()}) if "{" in e else e
             for e in exprs]  # fmt: skip
    conditions = "".join(f"    {name}_ = {name}(r)\n" for name in names)
    source = "".join(f"{b}\n\n" for b in builders) + f"def form_{cls.__name__}(r: {cls.__name__}, now: Now) -> tuple[Any, ...]:\n" + conditions + (
        "    return (" + "".join(f"{e}, " for e in exprs if e) + ")\n")  # fmt: skip
    return source, names


def plan(cls: type) -> Callable[[Any, Now], tuple[Any, ...]]:
    """A record type's form, made now from its declarations (`plan_source`): what `PLANS`
    holds when the forms written out below are not the declarations' (and for a record type
    of a test's own)."""
    source, names = plan_source(cls)
    NAMESPACE.update(names, **{cls.__name__: cls})  # the form's signature names the record type
    exec(compile(source, f"<canonical form of {cls.__name__}>", "exec"), NAMESPACE)  # noqa: S102 (our own source)
    form: Callable[[Any, Now], tuple[Any, ...]] = NAMESPACE[f"form_{cls.__name__}"]
    return form


def attempt(a: AttemptState, now: Now) -> tuple[Any, ...]:
    """An attempt's form. Not remembered: a form reads the tick, and an attempt is seldom met
    again within its tick (1 % of the calls at K=2, T=8 over every protection set, both
    checkpoint modes), so a memo cost more than it saved (1.5 % of the search's instructions)."""
    return form_AttemptState(a, now) if AS_WRITTEN else ATTEMPT_FORM(a, now)


def record(r: Any, now: Now) -> tuple[Any, ...]:
    """A declared record's form."""
    return attempt(r, now) if type(r) is AttemptState else PLANS[type(r)](r, now)


def shared(value: Any, now: Now, stamp: int | None, build: Callable[[Any, Now], Any]) -> Any:
    """`build(value, now)` for a part of the state, remembered by its identity, the versions
    and `stamp` (None: no record in it reads the tick)."""
    if not value:  # nothing in it (an empty tuple, None): its form is the value itself
        return value
    hit = _memo.get(id(value))
    if hit is not None and hit[0] is value and hit[1] is now.versions and hit[2] == stamp:
        return hit[3]
    form = build(value, now)
    _memo[id(value)] = (value, now.versions, stamp, form)
    return form


def inside(value: Any, now: Now) -> Any:
    """A value with each declared record in it by its form (where the type does not say)."""
    kind = type(value)
    if kind is tuple:
        return tuple([inside(v, now) for v in value])
    form = PLANS.get(kind)
    return value if form is None else record(value, now)


#: the forms that read the tick (or the silence cap, which the stamp names too)
TIMED_FORMS: Final = frozenset({"silence", "window", "remembered", "outage"})


def records_in(tp: Any) -> set[type]:
    """The declared record types a field's type mentions."""
    found = {tp} if isinstance(tp, type) and hasattr(tp, "_fields") else set()
    for arg in getattr(tp, "__args__", ()):
        found |= records_in(arg)
    return found


def timed(cls: type, seen: frozenset[type] = frozenset()) -> bool:
    """Whether a record's form reads the tick: a field kept relative to now, by a timed
    form, or a record inside it that does."""
    hints = get_type_hints(cls, include_extras=True)
    for name, keep in declarations(cls).items():
        for k in (keep, keep.then, keep.otherwise) if isinstance(keep, While) else (keep,):
            if isinstance(k, Relative) or (isinstance(k, Form) and k.name in TIMED_FORMS):
                return True
            if isinstance(k, Nested) and any(timed(r, seen | {cls}) for r in records_in(hints[name]) - seen - {cls}):
                return True
    return False


NAMESPACE.update(FORMS, attempt=attempt, shared=shared, inside=inside, Any=Any, Now=Now)
#: the declared record types, each with a form
RECORDS: Final = (State, AttemptState, Candidate, Acceptance, Part, JournalRecord, Feed)


def written() -> str:
    """The forms of `RECORDS` as this module writes them out below (`python -m
    sim.analysis.check.canon` writes them again): the conditions they call, imported by the
    names they call them, and each form's source."""
    sources = [plan_source(cls) for cls in RECORDS]
    conditions = sorted({(f.__module__, f.__name__, name) for _, names in sources for name, f in names.items()})
    imports = "".join(f"from {home} import {f} as {name}  # noqa: E402\n" for home, f, name in conditions)
    return imports + "".join(f"\n\n{source}" for source, _ in sources)


def written_digest(text: str) -> str:
    return digest(text.encode())


# -- written out from the declarations: do not edit (`written`; a stale copy is never used) -----------
from sim.engine.primitives import alive as when_alive  # noqa: E402
from sim.engine.primitives import heard_of as when_heard_of  # noqa: E402
from sim.engine.primitives import wrong as when_wrong  # noqa: E402


def build_State_7(v: Any, now: Now) -> Any:
    return tuple([form_Candidate(x0, now) for x0 in v])


def build_State_8(v: Any, now: Now) -> Any:
    return tuple([form_Acceptance(x0, now) for x0 in v])


def build_State_10(v: Any, now: Now) -> Any:
    return tuple([form_Feed(x0, now) for x0 in v])


def form_State(r: State, now: Now) -> tuple[Any, ...]:
    return ((None if r[2] is None else now.versions[r[2]]), (r[3] is None, None if r[3] is None or r[4] is None else r[3] <= r[4]), (r[4] is None), r[5], readable(r[6], r, now), shared(r[7], now, None, build_State_7), shared(r[8], now, None, build_State_8), r[9], shared(r[10], now, now.stamp, build_State_10), r[11], r[12], tuple([attempt(x0, now) for x0 in r[13]]), r[14], r[15], r[16], (None if r[17] is None else r[17] - now.t), outage(r[18], r, now), r[22], r[23], )


def form_AttemptState(r: AttemptState, now: Now) -> tuple[Any, ...]:
    when_alive_ = when_alive(r)
    when_heard_of_ = when_heard_of(r)
    return (((r[1], (None if r[2] is None else now.versions[r[2]]), results(r[8], r, now), r[9], r[10], r[11], (None if r[12] is None else (r[12][0], (None if r[12][1] is None else form_Part(r[12][1], now)), )), r[17], r[18], ) if when_alive_ else None), (r[3] if when_alive_ else (r[3] is None)), r[4], (None if r[5] is None else r[5] - now.t), r[6], silence(r[7], r, now), accepted(r[13], r, now), r[14], (r[15] is None), ((window(r[16], r, now), ) if when_heard_of_ else None), )


def form_Candidate(r: Candidate, now: Now) -> tuple[Any, ...]:
    return (r[0], r[1], r[2], tuple([form_Part(x0, now) for x0 in r[3]]), (None if r[4] is None else now.versions[r[4]]), )


def form_Acceptance(r: Acceptance, now: Now) -> tuple[Any, ...]:
    return (r[0], (None if r[1] is None else now.versions[r[1]]), )


def form_Part(r: Part, now: Now) -> tuple[Any, ...]:
    when_wrong_ = when_wrong(r)
    return (((r[0], ) if when_wrong_ else None), r[1], r[2], )


def form_JournalRecord(r: JournalRecord, now: Now) -> tuple[Any, ...]:
    when_wrong_ = when_wrong(r)
    return (((r[0], ) if when_wrong_ else None), r[1], r[3], )


def form_Feed(r: Feed, now: Now) -> tuple[Any, ...]:
    return (remembered(r[0], r, now), r[1], r[2], )
# -- end of the forms written out --------------------------------------------------------------------
WRITTEN = "34f5610eb8c37d4c015b46a9b3c35550"


def plans() -> dict[type, Callable[[Any, Now], tuple[Any, ...]]]:
    """Each record type's form: the functions written out above while they are what the
    declarations give now (compiled with this module, docs/compiled.md), else made now by
    `plan` from the declarations (the same forms, interpreted)."""
    if written_digest(written()) == WRITTEN:
        forms: dict[type, Callable[[Any, Now], tuple[Any, ...]]] = {cls: globals()[f"form_{cls.__name__}"] for cls in RECORDS}
        NAMESPACE.update({f"form_{cls.__name__}": form for cls, form in forms.items()})  # for `plan`'s forms
        return forms
    return {cls: plan(cls) for cls in RECORDS}


def in_use(plans: dict[type, Callable[[Any, Now], tuple[Any, ...]]]) -> bool:
    """Whether these forms are the ones written out above."""
    return all(plans[cls] is globals()[f"form_{cls.__name__}"] for cls in RECORDS)


#: each declared record type's form
PLANS: Final = plans()
STATE_FORM: Final = PLANS[State]
ATTEMPT_FORM: Final = PLANS[AttemptState]
PART_FORM: Final = PLANS[Part]
JOURNAL_FORM: Final = PLANS[JournalRecord]
#: whether the forms are the ones written out above: then `canonical`, `attempt`, `results` and
#: `readable` call them by name (compiled, a C call rather than a call through `PLANS`, which goes
#: through the interpreter's calling convention: about 1 % of the search's instructions)
AS_WRITTEN: Final = in_use(PLANS)
__all__ = ["FORMS", "PLANS", "Canonical", "canonical", "declarations", "forget", "readable", "trim"]


if __name__ == "__main__":  # write the forms out again from the declarations (`written`)
    import re
    from pathlib import Path

    path = Path(__file__)
    text = written()
    begin, end = "# -- written out from the declarations", "# -- end of the forms written out"
    source = path.read_text()
    head, rest = source.split(begin, 1)
    first, rest = rest.split("\n", 1)
    _, tail = rest.split(end, 1)
    tail = re.sub(r'\nWRITTEN = "[0-9a-f]*"\n', f'\nWRITTEN = "{written_digest(text)}"\n', tail, count=1)
    path.write_text(f"{head}{begin}{first}\n{text}{end}{tail}")
