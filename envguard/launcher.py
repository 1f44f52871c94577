"""The `envguard` console script: `envguard check` in its common forms without importing click.

`envguard check` runs before every training job and in pre-commit hooks. When the environment and the lock are
unchanged since the last clean full check, the answer is known from a few stat calls and printed straight from
the cache; otherwise the full check runs right here (click's import alone costs more than the comparison).
Any other command, option or form goes to envguard.cli, unchanged.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's own constant would cost an import on every start
if TYPE_CHECKING:
    from envguard.fastcheck import FastArgs


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    if args[:1] == ["check"]:
        code = _check(args[1:])
        if code is not None:
            sys.stdout.flush()
            sys.exit(code)
    from envguard.cli import main as cli_main

    cli_main()


def _check(args: list[str]) -> int | None:
    from envguard.fastcheck import parse_args, try_cached

    parsed = parse_args(args)
    if parsed is None:
        return None
    code = try_cached(parsed)
    if code is not None:
        return code
    return _boundary(parsed)


def _boundary(parsed: FastArgs) -> int:
    """The full check inside the same error boundary as envguard.cli.run (one line and an exit code)."""
    from envguard.errors import EXIT_INTERRUPTED, EnvguardError

    try:
        from envguard.checkrun import CheckOptions, main

        options = CheckOptions(parsed.source, parsed.lock, parsed.envfile, parsed.platform, style=parsed.style,
                               cache_checked=True)  # fmt: skip
        return main(options)
    except EnvguardError as exc:
        sys.stderr.write(f"envguard: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("envguard: error: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception:
        from envguard import cli

        return cli._bug()
