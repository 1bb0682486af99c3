"""The errors a user can meet. Library code raises these; only the CLI turns them into
messages and exit codes (2 for all of them: bad input)."""

from __future__ import annotations


class SimError(Exception):
    """Base class: a problem with what the user asked for, reported as one line."""


class SwitchError(SimError, ValueError):
    """An unknown switch name or value."""


class ScenarioError(SimError, ValueError):
    """A scenario file or name that cannot be loaded: names the file and the key."""


class ScheduleError(SimError, ValueError):
    """A fault schedule that cannot happen (a wake before its silence, a negative tick...)."""
