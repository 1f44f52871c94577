"""The one error boundary (click-free, so the launcher's fast paths share it with the click CLI).

Below it code raises EnvguardError subclasses; here they become one line on stderr and a documented exit code.
Anything else is a bug: the traceback goes to a log file whose path is printed, exit 4.
"""

from __future__ import annotations

import os
import sys

from envguard.errors import EXIT_BUG, EXIT_INTERRUPTED, EXIT_OK, EnvguardError
from envguard.version import __version__

TYPE_CHECKING = False  # typing's own constant would cost an import: the console script ends through here
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn


def guarded(call: Callable[[], Any]) -> int:
    """Run `call` and turn its outcome into an exit code (an int result is the code; anything else is 0)."""
    try:
        result = call()
    except EnvguardError as exc:
        error_line(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        error_line("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except Exception:  # the boundary: anything else is a bug with a saved traceback
        return bug()
    return result if isinstance(result, int) else EXIT_OK


def exit_process(code: int, *, finalise: bool = True) -> NoReturn:
    """Flush and end the process with `code`. It ends without finalising where `finalise` is False or once
    py-rattler is loaded, whose runtime's threads can crash CPython's finalisation after the work is done
    (SIGABRT or SIGSEGV, `PyGILState_Release ... finalizing`, in about one run in ten). The console script
    passes False for the forms it answers itself: they leave nothing for finalisation to close or clean up
    (each file they write is written atomically and closed, each thread pool joined and each child process
    waited for before they return), and tearing down what they loaded costs more than some answers take
    (~9 ms after an identical diff of two 3,000-package environments)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stdout: the exit code still tells
            continue
    if not finalise or "rattler" in sys.modules:
        os._exit(code)
    sys.exit(code)


def error_line(message: str) -> None:
    """The error as one line: no credential, every control character (a line break included) escaped."""
    from envguard.channels import scrub  # urllib's parser: loaded on an error, not on every answer
    from envguard.textio import visible  # re and the readers' module: as scrub

    sys.stderr.write(f"envguard: error: {visible(scrub(message), lines=False)}\n")


def bug() -> int:
    """Save the current exception's traceback to a log file and say where; exit code 4."""
    import tempfile
    import traceback

    from envguard.channels import scrub  # as in error_line

    fd, path = tempfile.mkstemp(prefix="envguard-crash-", suffix=".log")  # mode 0600
    # never a credential from argv or a message (S5); backslashreplace: a traceback can hold a path that is
    # not UTF-8 (a lone surrogate from argv)
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(scrub(f"envguard {__version__}, python {sys.version}\nargv: {sys.argv}\n\n"))
        handle.write(scrub(traceback.format_exc()))
    kind = sys.exc_info()[0]
    name = kind.__name__ if kind else "error"
    error_line(
        f"internal error ({name}); this is a bug in envguard. Traceback saved to {path}; please report it"
    )
    return EXIT_BUG


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
