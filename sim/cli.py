"""The `sim` command line. Commands only: parse, call the library, render, map errors.

Each command lives in `sim/commands/`; this module registers them and is the only place
that turns errors into messages and exit codes: 0 success, 1 a check failed, 2 bad input.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Mapping
from typing import Any

import click

from sim.commands import COMMANDS, command
from sim.base.errors import SimError
from sim.base.limits import ascii_number, printable


class PipeClosed(Exception):
    """Standard output's reader went away (`sim ... | head`): raised in place of the
    BrokenPipeError, which click (and Rich) would turn into exit 1, "a check failed"."""


class _Commands(click.Group):
    """The commands of `sim/commands/`, each imported when it is first needed; a closed pipe
    met anywhere in one (its help, its output) is a `PipeClosed`."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:  # `sim --help | head -c1`
            raise PipeClosed from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise PipeClosed from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return command(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with its whole first sentence, wrapped (click cuts it at the width)."""
        rows = [(name, command(name).get_short_help_str(limit=300)) for name in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _version() -> str:
    """The installed package's version (read only when `--version` asks for it): from the name
    of its dist-info folder when it can be, which spares the import of `importlib.metadata`."""
    from sim.base.lean_import import installed_version

    found = installed_version("sim")
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sim")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from sim.base.compiled import mode

        click.echo(f"sim {_version()}, {mode()}")  # compiled, or interpreted (why): docs/compiled.md
        ctx.exit(0)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Print the version and exit.")  # fmt: skip
def cli() -> None:
    """sim: a tick-based simulator and model checker for durable agent work."""


#: what click raises for a group called with no command (click 8.2 and later)
_NO_ARGS: type[Exception] = getattr(click.exceptions, "NoArgsIsHelpError", type("_Never", (Exception,), {}))


#: the variable click's shell completion reads, and the instructions it takes
COMPLETE_VAR = "_SIM_COMPLETE"
SHELLS = ("bash", "zsh", "fish")


def completion_problem(environ: Mapping[str, str]) -> str | None:
    """What is wrong with a shell completion request in `environ` (None: nothing, or no
    request). The shells' own scripts (`_SIM_COMPLETE=bash_source sim`) set COMP_WORDS and
    COMP_CWORD; a request without them, or with a word index that is not a number, was not
    made by a shell, and is bad input rather than a reason to fail inside click."""
    instruction = environ.get(COMPLETE_VAR)
    if instruction is None:
        return None
    shell, _, action = instruction.partition("_")
    allowed = ", ".join(f"{sh}_{a}" for sh in SHELLS for a in ("source", "complete"))
    if shell not in SHELLS or action not in ("source", "complete"):
        return f"{COMPLETE_VAR}={instruction[:60]!r}: expected one of {allowed}"
    if action == "source":
        return None
    missing = [name for name in ("COMP_WORDS", "COMP_CWORD") if name not in environ]
    if missing:
        return f"{COMPLETE_VAR}={instruction}: {' and '.join(missing)} must be set (the shell's completion script sets them)"
    if shell != "fish" and ascii_number(environ["COMP_CWORD"].strip(), 6) is None:
        return f"COMP_CWORD={environ['COMP_CWORD'][:60]!r}: expected the index of the word being completed (0 or more)"
    return None


def main(argv: list[str] | None = None) -> int:
    problem = completion_problem(os.environ) or _closed_output()
    if problem is not None:
        return _error(problem)
    _tolerant(sys.stdout)
    try:
        result = cli.main(args=argv, prog_name="sim", standalone_mode=False)
        sys.stdout.flush()  # what is still buffered meets a closed pipe here, not at exit
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except _NO_ARGS:  # a bare `sim` (or `sim GROUP`): the help, as `sim --help` prints it
        click.echo(cli.get_help(click.Context(cli, info_name="sim")))
        return 0
    except click.ClickException as exc:
        return _error(_click_message(exc))
    except click.Abort:
        click.echo("sim: interrupted", err=True)
        return 130
    except SimError as exc:
        return _error(str(exc))
    except (PipeClosed, BrokenPipeError):  # the reader had what it wanted: quiet, success
        _silence_stdout()
        return 0
    except OSError as exc:
        if exc.filename is not None or exc.errno not in _STREAM_ERRORS:
            return _internal(exc)
        # writing to standard output or error failed (a full disk, /dev/full): not a bug
        return _error(f"cannot write the output ({os.strerror(exc.errno)})")
    except RecursionError:
        return _error("the input is nested too deeply to read")
    except MemoryError:
        return _error("out of memory: the input asks for more than this machine holds")
    except Exception as exc:  # noqa: BLE001 (a bug: one line, not a traceback; exit 1, never 2)
        return _internal(exc)
    return result if isinstance(result, int) else 0


def _closed_output() -> str | None:
    """Standard output closed (`sim ... >&-`: Python has no sys.stdout): bad input, said
    before any work (a file opened later would take its descriptor)."""
    return "standard output is closed; redirect it to a file or /dev/null instead" if sys.stdout is None else None


def _tolerant(stream: Any) -> None:
    """A character standard output's encoding cannot take (a ✓ with PYTHONIOENCODING=latin-1,
    an undecodable byte of a file's name) is written as its escape (`\\u2713`), not an error."""
    if getattr(stream, "errors", None) == "strict":
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):  # not a text stream of io's
            pass


def _silence_stdout() -> None:
    """After a closed pipe: standard output goes to /dev/null, so that the interpreter's last
    flush of what is still buffered does not fail again (and print a traceback, exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, ValueError, OSError):  # no real descriptor (a test's stream)
        pass


#: what a write to a stream (standard output or error) fails with when the stream cannot take it
_STREAM_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG)


def _internal(exc: BaseException) -> int:
    """A bug: one line, not a traceback; exit 1, never 2."""
    click.echo(printable(f"sim: internal error (a bug in sim, please report it): {type(exc).__name__}: {exc}"[:500]), err=True)
    return 1


def _error(message: str) -> int:
    """Bad input: one line on stderr, exit 2."""
    line = printable(" ".join(message.split()))  # a path as typed may hold a terminal's escapes
    click.echo(f"sim: error: {line[:1000]}", err=True)
    return 2


def _click_message(exc: click.ClickException) -> str:
    """Click's error as one line, prefixed with the command it is about (its usage block and
    "Try --help" lines are dropped; "did you mean" stays in the message)."""
    ctx = getattr(exc, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None and ctx.command_path != "sim" else ""
    return where + exc.format_message()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
