"""The bounds `sim` checks before any work starts, each declared once (docs/limits.md).

A value outside them is bad input: exit 2 with one line naming the file or option, the key,
what was found and what is allowed. They are far above anything the worked example or the
tools' defaults need, and low enough that no accepted input runs for long or fills memory.
"""

from __future__ import annotations

import json
import os

#: a scenario file is read whole, up to this many bytes
MAX_FILE_BYTES = 1 << 20
#: tables and arrays inside a scenario file nest at most this deep
MAX_DEPTH = 8
#: a scenario name or path, in characters
MAX_NAME = 1024
#: the engine's horizon (the guard tick at which a run stops) at most
MAX_HORIZON = 1000
#: the report's sections at most (`schedule.sections`, 2..MAX_SECTIONS: one letter each, A..Z)
MAX_SECTIONS = 26
#: the most sections (a workflow's steps) `sim check` offers report changes over: every
#: non-empty set of them at every tick, 1,023 at 10 (`ReportChange.too_many_offers`)
MAX_CHANGE_SECTIONS = 10
#: any integer in a scenario's [schedule] or [expect], in absolute value
MAX_INT = 1_000_000
#: entries in one list of a scenario file (one fault kind's list, a change's sections, ...)
MAX_LIST = 100
#: characters of a scenario's description
MAX_TEXT = 10_000
#: `sim check --max-faults` at most (the walk grows about 50-fold per fault at horizon 12)
MAX_CHECK_FAULTS = 6
#: `sim explore --max-faults` at most
MAX_EXPLORE_FAULTS = 12
#: `sim explore --examples` at most
MAX_EXAMPLES = 100_000_000
#: worker processes at most, per CPU
WORKERS_PER_CPU = 4


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, as `taskset` sets it), not the machine's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: the CPUs this process may use, and worker processes at most (`--workers`, `-j`,
#: `--scheduler local:N`): more only cost memory
CPUS = usable_cpus()
MAX_WORKERS = WORKERS_PER_CPU * CPUS
#: a value quoted in an error message is cut to this many characters
MAX_QUOTE = 60


def quote(value: object) -> str:
    """The value for an error message, cut to MAX_QUOTE characters: a string as Python quotes
    it ('text'), anything else as it would be written in TOML or JSON (true, [1, 2])."""
    try:
        text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"
