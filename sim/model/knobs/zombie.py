"""`zombie`: what a worker that wakes after it was replaced reads (an engine behaviour beyond
the article's model, issue 14; docs/profiles.md).

- `rereads` (the article's): before each step it looks the step up in the journal, so a
  woken attempt restores what others wrote meanwhile and computes only what is missing.
- `from-memory`: it reads the journal only before its first model call; after that it runs
  on from what it holds in memory, computes every later step itself and writes it (with
  fencing off its writes replace the records others wrote). A real LangGraph worker resumed
  from a stop behaves so: it never re-reads the checkpoint.
"""

from sim.model.knobs.base import Knob, register

ZOMBIE = register(Knob(
    name="zombie",
    values=("rereads", "from-memory"),
    words="what a worker reads after its first model call: the journal before each step, or nothing",
    case=0,
    meanings=("looks each step up in the journal first", "reads the journal once, before its first model call"),
))  # fmt: skip
