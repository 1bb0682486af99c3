"""Hypothesis profiles for the property tests.

- `default`: a modest example count, so the whole default test run stays well under a minute.
- `thorough`: 20x the examples, for long runs: `HYPOTHESIS_PROFILE=thorough pytest`.

Both are deterministic (`derandomize`: examples derive from each test's own source, so CI
reruns are reproducible) and keep no example database, and neither has a deadline (timings on
a shared machine are noisy; `benchmarks/` measures speed instead).
"""

from __future__ import annotations

import os

from hypothesis import settings

#: max_examples of the default profile; `thorough` multiplies it by THOROUGH_FACTOR
DEFAULT_EXAMPLES = 100
THOROUGH_FACTOR = 20

settings.register_profile(
    "default",
    max_examples=DEFAULT_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
)
settings.register_profile("thorough", settings.get_profile("default"), max_examples=DEFAULT_EXAMPLES * THOROUGH_FACTOR)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
