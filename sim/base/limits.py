"""The bounds `sim` checks before any work starts, each declared once (docs/limits.md).

A value outside them is bad input: exit 2 with one line naming the file or option, the key,
what was found and what is allowed. They are far above anything the worked example or the
tools' defaults need, and low enough that no accepted input runs for long or fills memory.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys

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


def ascii_number(text: str, most_digits: int) -> int | None:
    """`text` as a whole number when it is 1 to `most_digits` ASCII digits, else None: not
    "²" or "①" (digits to `str.isdigit`, not to `int`), and not 5,000 digits (which `int`
    refuses past 4,300, and no count or index here needs)."""
    return int(text) if 0 < len(text) <= most_digits and text.isascii() and text.isdigit() else None


def quote(value: object) -> str:
    """The value for an error message, cut to MAX_QUOTE characters: a string as Python quotes
    it ('text'), anything else as it would be written in TOML or JSON (true, [1, 2]); an
    integer too long for Python to write in decimal (a hex literal of a TOML file) by its size."""
    try:
        text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        try:
            text = repr(value)
        except ValueError:  # an integer past Python's limit on decimal digits, or a list holding one
            text = _too_long(value)
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"


def _too_long(value: object) -> str:
    """An integer past `sys.get_int_max_str_digits()` (or what holds one), in words."""
    if isinstance(value, int):
        return f"an integer of about {math.floor(value.bit_length() * math.log10(2)) + 1:,} digits"
    return f"a {type(value).__name__} holding an integer of more than {sys.get_int_max_str_digits():,} digits"


#: a run of digits longer than Python reads as an integer (`sys.get_int_max_str_digits`, 4,300)
_LONG_NUMBER = re.compile(r"[0-9_]{%d,}" % (sys.get_int_max_str_digits() or 4300))


def unreadable_number(text: str, exc: ValueError) -> str:
    """What a TOML parser's ValueError (not a TOMLDecodeError) says about `text`: Python reads
    no decimal integer of more than 4,300 digits, so the parser fails on one; said with its line."""
    found = _LONG_NUMBER.search(text)
    if found is None:
        return f"not valid TOML: {exc}"
    line = text.count("\n", 0, found.start()) + 1
    return f"line {line}: a number of more than {sys.get_int_max_str_digits():,} digits; numbers are far smaller (docs/limits.md)"


#: what a terminal would act on rather than show: C0 and C1 controls and DEL (escape sequences
#: that set its title, move the cursor, ...), the line and paragraph separators, the bidi
#: controls, and lone surrogates (an undecodable byte of a file's name)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` with each character a terminal would act on written as its escape (`\\x1b`,
    `\\u202e`), so that a description or a name read from a file is shown, never obeyed."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii")
                        if ord(m.group()) < 0xD800 else f"\\u{ord(m.group()):04x}", text)  # fmt: skip
