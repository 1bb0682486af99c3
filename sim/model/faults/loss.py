"""A storage loss (outside the article's model, its tenth case): at the start of tick t one
store loses every record it holds: the journal (its step records), the controller's
acceptance records, or the effect records (intents and confirmations). The article assumes
the records are durable; nothing in the model protects against losing them.

- the journal: a cost only. A later attempt finds nothing to restore and calls the model
  again for every step.
- the acceptances: the controller no longer knows the work was done. It rebuilds, and
  accepts a second digest for the same report (two-acceptances, with all four protections on).
- the effects: a successor that inherits an announcement finds no intent to reconcile; it
  records a new one and resends (the per-operation key still makes the feed repeat its post).

(docs/outside.md, case 10.)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScenarioError
from sim.model.events import Lost, payload
from sim.model.faults.base import (
    AtTick,
    Bounds,
    Choices,
    Entry,
    Fault,
    Loss,
    Moment,
    Observed,
    Setting,
    draw_tick,
    integer_field,
    lower,
)
from sim.base.limits import quote

#: the stores that can be lost, in `sim check`'s order (and the order simpler ones are tried)
STORES = ("journal", "effects", "acceptances")


@dataclass(frozen=True, slots=True)
class StorageLoss(AtTick):
    """At the start of tick `at`, `store` loses every record it holds."""

    key = "storage_losses"
    entries = {
        "at": Entry("the tick at whose start the store loses every record it holds (one loss per tick)",
                    required=True, lo=0),
        "store": Entry("the store that loses its records", choices=STORES),
    }
    plural = "storage losses"
    check_name = "storage_loss"
    moment = Moment.INPUT
    shown_by = "lost"
    unfired_words = "loss"
    case = 10
    coverage_labels = tuple(f"{store} lost" for store in STORES)
    article = False

    at: int
    store: str = "journal"

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> StorageLoss:
        at = integer_field(item, "at", where)
        store = item.get("store", "journal")
        if store not in STORES:
            raise ScenarioError(f"{where}.store: {quote(store)} is not a store; allowed: {', '.join(STORES)}")
        assert at is not None
        return cls(at=at, store=store)

    def dump(self) -> str:
        return f'{{at = {self.at}, store = "{self.store}"}}'

    @classmethod
    def validate(cls, faults: Sequence[StorageLoss], schedule: Setting) -> None:
        cls.check_ticks(faults, "losses")

    def sort_key(self) -> tuple[int, int]:
        return (self.at, STORES.index(self.store))

    def describe(self) -> str:
        return f"the {self.store} records are lost at t{self.at}"

    # -- the engine --------------------------------------------------------------------
    def directive(self) -> Loss:
        return Loss(self.store)

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> StorageLoss | None:
        at = draw_tick(c, 0, bounds)
        store = c.pick(STORES)
        if any(f.moment is Moment.INPUT and f.where() == (at,) for f in drawn):
            return None
        return cls(at, store)

    def simpler(self, sections: int) -> Iterator[StorageLoss]:
        for at in lower(self.at, 0):
            yield StorageLoss(at, self.store)
        for store in STORES[: STORES.index(self.store)]:
            yield StorageLoss(self.at, store)

    def complexity(self) -> tuple[int, int]:
        return self.at, STORES.index(self.store)

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[StorageLoss]:
        for at in range(bounds.last_tick + 1):
            for store in STORES:
                yield cls(at, store)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int]:
        return f"{payload(event, Lost)['store']} lost", event.tick, event.tick

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        return [cls(tick, store) for store in STORES]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any tick t0..t{horizon}, any of the {', '.join(STORES)} records"
