"""`sim check`'s state-space search (docs/check.md, "How the space is searched").

A node is (tick, canonical state, faults used, faults still restricting what is offered,
the property monitors' memos and which properties broke, idle). From a node at tick t, a
transition is one choice of faults for tick t: none, or one fault at each of some of the
moments the tick consults (`sim.model.faults.Moment`), as many as the budget allows. Each fault is
one a registered kind offers there (`Fault.offers`), so the search walks exactly the
schedules the bound names. The tick is stepped by the engine's own rules
(`sim.engine.rules.run_tick`); the choices within a tick are enumerated as a generation
tree (a choice is added only at a moment after the last one chosen, so each set of choices
is built once).

Breadth first, by tick: every node of a level is expanded before the next level, and
nodes of a level that are equal (equal fingerprints of their canonical form) are merged:
their numbers of schedules add up, and the one reached by the least schedule (fewest
faults, then `sim check`'s canonical order of faults) stands for them all. Merged nodes
have the same future, so:

- `schedules` (the number of paths from the root to an end) is exactly the number of
  schedules the bound holds, and each property's violation count is the number of those
  schedules that break it, as the schedule enumerator (`sim.analysis.check.enumerator`) counts them;
- the shortest counterexample of a property (fewest faults, then the earliest tick it
  broke, then the canonical order) is the one the enumerator finds.

A run whose actors have all stopped is over unless a report change may still come
(docs/model.md §5.8): the search counts it as ended, and also keeps it, idle, for the
ticks up to the horizon at which a change may still be offered (an idle node ends no
schedule of its own: "no change" from there is the schedule already counted).

A node whose budget is spent has one transition per tick and is still merged by level; a
node past the horizon runs straight to its end without merging (`Search.straight`).

Merging trusts the canonical form (`sim.analysis.check.canon`). `Space.merge` "none" turns it off:
nodes merge only when their full states are equal (every field, history included), which
needs no argument at all (the engine is a function of the state and the faults to come), so
`sim check --merge none` reruns a doubtful verdict without trusting the canonical form, at
the cost of a larger search; `tests/test_differential.py` compares the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any, Final

from mypy_extensions import mypyc_attr

from sim.base import memory
from sim import properties
from sim.analysis.check import canon
from sim.analysis.check.canon import canonical
from sim.engine.primitives import content
from sim.engine.rules import Faults, run_tick
from sim.engine.state import State, initial_state
from sim.model.faults import KINDS, Fault, Moment, check_order
from sim.properties.base import Monitor, Property, judged_under
from sim.model.schedule import Schedule
from sim.model.switches import Switches
from sim.engine.trace import Event, Kind

#: faults in `sim check`'s canonical order, as comparable keys (the least path is the least of these)
Keys = tuple[tuple[Any, ...], ...]
#: a property's shortest counterexample so far: ((faults, tick, keys), the faults in order)
Example = tuple[tuple[int, int, Keys], tuple[Fault, ...]]
#: a choice of faults within one tick: (consult index, fault) pairs, by index
Plan = tuple[tuple[int, Fault], ...]
#: a monitor's step (`Monitor.step`)
MonitorStep = Callable[[Any, Event, tuple[int, ...], int], tuple[Any, bool]]
#: how nodes of a level merge (`Space.merge`): by their canonical form, or only when their
#: full states are equal (no argument trusted: `sim check --merge none`)
MERGES: Final = ("canonical", "none")


class NoFaults(Faults):
    """The fault schedule with nothing left in it; the rules log the kinds of event in `logged`
    (None: every kind, `rules.Faults.logged`)."""

    __slots__ = ()

    def consult(self, tick: int, moment: Moment, where: tuple[int, ...]) -> None:
        return None


NO_FAULTS: Final = NoFaults()


def keys(faults: Sequence[Fault]) -> Keys:
    """The faults in `sim check`'s canonical order, as comparable keys."""
    return tuple(sorted(check_order(f) for f in faults))


class Chooser(Faults):
    """The faults the rules consult during one transition: the plan's fault at each chosen
    consult (counted from 0 within the tick), none elsewhere; with `record`, every consult
    in order (where further faults may be chosen). The rules log the kinds of event in
    `logged` (None: every kind, `rules.Faults.logged`)."""

    __slots__ = ("consults", "plan", "seq")

    def __init__(self, plan: dict[int, Fault], record: bool, logged: frozenset[Kind] | None = None) -> None:
        Faults.__init__(self, logged)
        self.plan = plan
        self.seq = 0
        self.consults: list[tuple[int, Moment, tuple[int, ...]]] | None = [] if record else None

    def consult(self, tick: int, moment: Moment, where: tuple[int, ...]) -> Fault | None:
        i = self.seq
        self.seq = i + 1
        if self.consults is not None:
            self.consults.append((i, moment, where))
        return self.plan.get(i)


@dataclass(slots=True, init=False)
class Node:
    """A node of one level, with the schedules that reach it (`count`) and the least of them
    (`path`, the faults in the order they took effect; `rank`, its keys)."""

    state: State
    used: int
    pending: tuple[Fault, ...]
    memos: tuple[Any, ...]
    broken: int
    idle: bool
    count: int
    path: tuple[Fault, ...]
    rank: Keys

    def __init__(self, state: State, used: int, pending: tuple[Fault, ...], memos: tuple[Any, ...], broken: int,
                 idle: bool, count: int, path: tuple[Fault, ...], rank: Keys) -> None:  # fmt: skip
        # written out rather than the dataclass's: compiled, a node is then made without a
        # call into the interpreter (the search makes one for every transition)
        self.state = state
        self.used = used
        self.pending = pending
        self.memos = memos
        self.broken = broken
        self.idle = idle
        self.count = count
        self.path = path
        self.rank = rank

    def __reduce__(self) -> tuple[type[Node], tuple[Any, ...]]:
        # pickled (to a worker) as the call that makes it again: compiled, a class with its own
        # `__init__` is not made by `__new__` alone, which pickle's default would call
        return Node, (self.state, self.used, self.pending, self.memos, self.broken, self.idle, self.count, self.path,
                      self.rank)  # fmt: skip


@mypyc_attr(native_class=False)  # compiled natively, a frozen dataclass would not unpickle in a worker
@dataclass(frozen=True, slots=True)
class Space:
    """What the search walks: the switches, the bound and the setting's constants."""

    switches: Switches
    max_faults: int
    horizon: int
    setting: Schedule
    #: the properties judged, by name (each must have a monitor)
    judged: tuple[str, ...]
    #: the fault kinds that may be chosen, by key (in registry order)
    kinds: tuple[str, ...]
    #: how nodes merge (`MERGES`): "canonical" (the default) or "none" (full states only)
    merge: str = "canonical"

    @property
    def properties(self) -> tuple[Property, ...]:
        return tuple(properties.BY_NAME[name] for name in self.judged)


@dataclass(slots=True)
class Found:
    """What a search (or one unit of it) found: merged with sums and minima, so the result
    does not depend on how the work was split or in what order it was done."""

    nodes: int = 0
    transitions: int = 0
    depth: int = 0
    schedules: int = 0
    horizon_reached: int = 0
    violations: dict[str, int] = field(default_factory=dict)
    shortest: dict[str, Example] = field(default_factory=dict)

    def add(self, other: Found) -> None:
        self.nodes += other.nodes
        self.transitions += other.transitions
        self.depth = max(self.depth, other.depth)
        self.schedules += other.schedules
        self.horizon_reached += other.horizon_reached
        for name, count in other.violations.items():
            self.violations[name] = self.violations.get(name, 0) + count
        for name, example in other.shortest.items():
            self.offer(name, example)

    def offer(self, name: str, example: Example) -> None:
        known = self.shortest.get(name)
        if known is None or example[0] < known[0]:
            self.shortest[name] = example


#: a node's identity within its level: its canonical form (a tuple of plain values)
NodeKey = tuple[Any, ...]


def node_key(node: Node, merge: str = "canonical") -> NodeKey:
    """What makes a node the node it is (the level's tick aside): the canonical state (with
    `merge` "none", the full state) and the search's own parts. Levels are dicts keyed by it,
    so merging is exact."""
    state = canonical(node.state) if merge == "canonical" else node.state
    return (state, node.used, node.pending, node.memos, node.broken, node.idle)


def fingerprint(key: NodeKey) -> int:
    """A stable 8-byte fingerprint of a node key (BLAKE2b of its repr: plain values, enums
    and fault values), the same on every machine and in every process, unlike `hash`: it
    decides which unit of work a node goes to when the search is split."""
    return int.from_bytes(blake2b(repr(key).encode(), digest_size=8).digest(), "little")


def root(space: Space) -> Node:
    """The node at t0: nothing has happened, no fault used."""
    state = initial_state(space.switches, space.setting.with_faults(()))
    memos = tuple(p.monitor.start for p in space.properties)  # type: ignore[union-attr]
    return Node(state, 0, (), memos, 0, False, 1, (), ())


class MemoryLimit(Exception):
    """A search that stopped at its memory bound: what it found so far (not exhaustive), and
    the resident memory it held then."""

    def __init__(self, found: Found, held: int) -> None:
        super().__init__(found, held)
        self.found = found
        self.held = held


class TransitionLimit(Exception):
    """A search that stopped at its bound on transitions (`Search.transition_limit`): a
    sample that would have been larger than a sample should be (`check.estimate`)."""

    def __init__(self, found: Found) -> None:
        super().__init__(found)
        self.found = found


@mypyc_attr(allow_interpreted_subclasses=True)  # tests and benchmarks extend it (docs/compiled.md)
class Search:
    """One search over a space, level by level (see the module docstring)."""

    def __init__(self, space: Space, memory_limit: int = 0, transition_limit: int = 0) -> None:
        self.space = space
        self.found = Found()
        #: the most resident memory this process may hold (0: no bound); past it the search
        #: stops with `MemoryLimit`, carrying what it found so far
        self.memory_limit = memory_limit
        #: the most transitions (0: no bound); past it, checked after each node, the search
        #: stops with `TransitionLimit`
        self.transition_limit = transition_limit
        self._next_look = memory.CHECK_EVERY
        # keyed by the enums' values: an Enum's own __hash__ is a Python call, and these
        # lookups run at every consult and every event
        self.by_moment: dict[int, list[type[Fault]]] = {}
        for kind in KINDS:
            if kind.key in space.kinds:
                self.by_moment.setdefault(kind.moment._value_, []).append(kind)
        self.changes_offered = Moment.INPUT._value_ in self.by_moment
        self.monitors: list[tuple[int, Property, Monitor]] = []
        for i, prop in enumerate(space.properties):
            assert prop.monitor is not None, f"{prop.name} has no monitor"
            if not judged_under(prop, space.switches):
                continue  # not judged under these settings: its memo stays at its start
            self.monitors.append((i, prop, prop.monitor))
        #: by event kind, the monitors that read it: (index, property, its monitor's step)
        self.watch: dict[Kind, list[tuple[int, Property, MonitorStep]]] = {}
        for i, prop, monitor in self.monitors:
            for event_kind in monitor.kinds:
                self.watch.setdefault(event_kind, []).append((i, prop, monitor.step))
        #: the kinds of event the rules log in this search: the ones a monitor reads (no other
        #: event is read: making them was about 3 % of the search's instructions)
        self.logged = frozenset(self.watch)
        self.no_faults = NoFaults(self.logged)

    # -- one level --------------------------------------------------------------------
    def level(self, frontier: dict[NodeKey, Node], t: int) -> dict[NodeKey, Node]:
        """Expand every node of tick t's level, emptying `frontier`; return tick t + 1's."""
        found = self.found
        found.nodes += len(frontier)
        found.depth = max(found.depth, t)
        following: dict[NodeKey, Node] = {}
        space = self.space
        while frontier:  # each node is let go as soon as it is expanded: memory peaks lower
            node = frontier.popitem()[1]
            if t > space.horizon:
                self.straight(node, t)
                continue
            for plan, state, events in self.successors(node, t):
                found.transitions += 1
                self.arrive(node, plan, state, events, t, following)
            if self.memory_limit and found.transitions >= self._next_look:
                self._look_at_memory()
            if self.transition_limit and found.transitions >= self.transition_limit:
                raise TransitionLimit(found)
        canon.trim()
        return following

    def _look_at_memory(self) -> None:
        """Stop (`MemoryLimit`) if this process holds more than its bound."""
        self._next_look = self.found.transitions + memory.CHECK_EVERY
        held = memory.rss()
        if held > self.memory_limit:
            raise MemoryLimit(self.found, held)

    def straight(self, node: Node, t: int) -> None:
        """A node past the horizon, where no fault can take effect any more, runs straight to
        its end: each tick a node and a transition, not merged (past the horizon runs seldom
        meet: at 3 faults, horizon 8, merging them would save 2 % of the transitions and
        cost a third of the time)."""
        found = self.found
        state = node.state
        memos, broken = node.memos, node.broken
        while True:
            state, events = run_tick(state, t, self.no_faults)
            found.transitions += 1
            if events:
                memos, broken = self.follow(memos, broken, events, content(state), node.used, node.path)
            if state.finished:
                break
            t += 1
            found.nodes += 1
        found.depth = max(found.depth, t)
        self.end(state, memos, broken, node.count, node.used, node.path)

    def successors(self, node: Node, t: int) -> Iterator[tuple[Plan, State, list[Event]]]:
        """Every choice of faults for tick t from this node, with the tick it gives."""
        space = self.space
        budget = space.max_faults - node.used if t <= space.horizon else 0
        stack: list[tuple[Plan, int]] = [((), -1)]
        while stack:
            plan, last = stack.pop()
            chooser = Chooser(dict(plan), len(plan) < budget, self.logged)
            state, events = run_tick(node.state, t, chooser)
            yield plan, state, events
            if chooser.consults is None:
                continue
            code = node.pending + tuple(f for _, f in plan)
            for i, moment, where in chooser.consults:
                if i <= last:
                    continue
                for kind in self.by_moment.get(moment._value_, ()):
                    for fault in kind.offers(code, t, where, space.horizon, space.setting):
                        stack.append((plan + ((i, fault),), i))

    def arrive(self, node: Node, plan: Plan, state: State, events: list[Event], t: int,
               following: dict[NodeKey, Node]) -> None:  # fmt: skip
        """Take in one transition: follow the monitors, count an end, merge the next node."""
        faults = tuple(f for _, f in plan)
        used = node.used + len(faults)
        path = node.path + faults if faults else node.path
        memos, broken = self.follow(node.memos, node.broken, events, content(state), used, path)
        space = self.space
        if state.finished:
            if faults or not node.idle:
                self.end(state, memos, broken, node.count, used, path)
            if state.horizon_reached or t >= space.horizon or used >= space.max_faults or not self.changes_offered:
                return
            # a report change may still come: the run waits for it, idle
            state = state._replace(finished=False, last_tick=0, tick=t + 1)
            idle = True
        else:
            idle = False
        pending = tuple(
            f for f in node.pending + faults if (until := f.restricts_until()) is not None and until > t
        )  # fmt: skip
        rank = tuple(sorted(node.rank + keys(faults))) if faults else node.rank
        self.merge(following, Node(state, used, pending, memos, broken, idle, node.count, path, rank))

    def key(self, node: Node) -> NodeKey:
        """The node's key in its level (`node_key`): where a test swaps in an unsound form to
        see the differential test catch it (tests/test_differential.py)."""
        return node_key(node, self.space.merge)

    def merge(self, following: dict[NodeKey, Node], arrived: Node) -> None:
        """Add a node to the next level, merging it with an equal one already there."""
        known = following.setdefault(self.key(arrived), arrived)  # the key hashed once
        if known is arrived:
            return
        known.count += arrived.count
        if arrived.rank < known.rank:
            known.state, known.path, known.rank = arrived.state, arrived.path, arrived.rank

    def follow(self, memos: tuple[Any, ...], broken: int, events: list[Event], content: tuple[int, ...], used: int,
               path: tuple[Fault, ...]) -> tuple[tuple[Any, ...], int]:  # fmt: skip
        """Step the monitors over a tick's events; offer each new break as a counterexample."""
        if not events:
            return memos, broken
        watch = self.watch
        changed = list(memos)
        for e in events:
            entries = watch.get(e.kind)
            if entries is None:
                continue
            for i, prop, step in entries:
                changed[i], broke = step(changed[i], e, content, e.tick)
                if broke and not broken >> i & 1:
                    broken |= 1 << i
                    self.found.offer(prop.name, ((used, e.tick, keys(path)), path))
        return tuple(changed), broken

    def end(self, state: State, memos: tuple[Any, ...], broken: int, count: int, used: int,
            path: tuple[Fault, ...]) -> None:  # fmt: skip
        """A schedule ends here (`count` of them): judge the progress properties, count."""
        found = self.found
        found.schedules += count
        if state.horizon_reached:
            found.horizon_reached += count
        for i, prop, monitor in self.monitors:
            if monitor.end is not None:
                positions = monitor.end(memos[i])
                if not positions:
                    continue
                found.offer(prop.name, ((used, positions[0], keys(path)), path))
            elif not broken >> i & 1:
                continue
            found.violations[prop.name] = found.violations.get(prop.name, 0) + count

    # -- the whole search ---------------------------------------------------------------
    def run(self, frontier: dict[NodeKey, Node], t: int) -> Found:
        """Search from the given level (its nodes, at tick t) until no node is left, with the
        cyclic garbage collector paused (`memory.collector_paused`)."""
        with memory.collector_paused():
            try:
                while frontier:
                    frontier = self.level(frontier, t)
                    t += 1
            finally:
                canon.forget()  # the memo of shared parts keeps this search's parts alive
        return self.found


__all__ = ["Chooser", "Found", "MemoryLimit", "Node", "Search", "Space", "TransitionLimit", "fingerprint", "keys",
           "node_key", "root"]
