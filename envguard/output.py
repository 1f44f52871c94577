"""How results leave envguard: the one presenter (JSON with one schema_version, human, Markdown), writing to
-o FILE or stdout, warnings to stderr, and the small formatting helpers every view shares.

Nothing read from an input reaches a terminal raw: every text leaving here has its control and bidi
characters written as visible escapes (envguard.textio.visible; JSON keeps them as `\\u` escapes), warnings
and errors are one line each, rich never reads a value as markup, and every command envguard prints is built
by `command` (one line by construction)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import re
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from envguard.atomic import write_output
from envguard.channels import scrub
from envguard.errors import EXIT_BUG, EXIT_INTERRUPTED, EnvguardError
from envguard.model import SCHEMA_VERSION

# the columns every view is laid out for (envguard.terminal), named here for the renderers
from envguard.terminal import NARROW as NARROW
from envguard.terminal import PIPE_WIDTH as PIPE_WIDTH
from envguard.terminal import line_width as line_width
from envguard.terminal import terminal_width as terminal_width
from envguard.textio import visible, visible_json


def dumps(data: Any) -> str:
    """Deterministic, diff-friendly JSON: the top two levels indented, deeper values (one package, one
    finding) on a single line each. Built from the C encoder, so a 300-package snapshot serialises in about a
    millisecond. Control and bidi characters in values are `\\u` escapes (json.dumps leaves DEL, C1 and the
    bidi controls raw)."""
    return visible_json(_pretty(data, 0) + "\n")


def _pretty(value: Any, level: int) -> str:
    pad = "  " * (level + 1)
    if level < 2 and isinstance(value, dict) and value:
        items = (
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, level + 1)}"
            for k, v in value.items()
        )
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if level < 2 and isinstance(value, list | tuple) and value:
        return "[\n" + ",\n".join(pad + _pretty(v, level + 1) for v in value) + "\n" + "  " * level + "]"
    return json.dumps(value, ensure_ascii=False)


def emit(text: str, output: str | None) -> None:
    """Write `text` to `output` (atomically onto a file, straight through onto a FIFO or device; see
    envguard.atomic.write_output), or to stdout when it is None or '-'."""
    text = as_printed(text)
    if output and output != "-":
        write_output(Path(output), text.encode("utf-8"))
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def as_printed(text: str) -> str:
    """A view as envguard prints it: no credential from any input (S2/S3), no raw control character (the
    check fast path stores its answers in this form and writes them as they are)."""
    return visible(scrub(text))


def warn(message: str) -> None:
    """One line on stderr (a line break inside the message is escaped like any control character)."""
    sys.stderr.write(f"envguard: warning: {visible(scrub(message), lines=False)}\n")


def inform(message: str) -> None:
    """A line on stderr about what was done (`envguard: wrote conda-lock.yml ...`), apart from the output."""
    sys.stderr.write(f"envguard: {visible(scrub(message), lines=False)}\n")


def oneline(text: str) -> str:
    """One value or one line of a view as it may be shown: every control character escaped, line breaks
    included (a value cannot start a line of its own: a forged verdict or "How to fix" line)."""
    return visible(text, lines=False)


# --- commands envguard prints ----------------------------------------------------------------------------

_PLAIN_WORD = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


def shell_quote(word: str) -> str:
    """One shell word as the shell will read it back: shlex.quote, except that a word holding a line break or
    any other control character is written in bash's ANSI-C quoting (`$'zlib\\x0aHow to fix'`, each escape
    the character's UTF-8 bytes), so it stays one visible word on one line that bash reads back exactly (a NUL
    cannot be in a command's argument at all: it is refused where read)."""
    if _PLAIN_WORD.fullmatch(word):
        return word
    if oneline(word) == word:
        return shlex.quote(word)
    quoted = visible(word.replace("\\", "\\\\").replace("'", "\\'"), lines=False, utf8_bytes=True)
    return f"$'{quoted}'"


def command(*words: str) -> str:
    """The one builder of every command envguard prints (fix lines, Reproduce lines, re-lock advice): each
    word quoted for the shell (`shell_quote`), joined by spaces: one line that runs as printed, whatever the
    words hold."""
    return " ".join(shell_quote(word) for word in words)


def human_bytes(value: float | None) -> str:
    """`1.5 GiB`-style sizes for evidence strings."""
    if value is None:
        return "unknown"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


# --- the terminal
# ---------------------------------------------------------------------------------------------


def text_console(width: int | None = None) -> Any:
    """A rich Console that renders into a string (read it back with `console_text`) at the terminal's width,
    without colour codes (the text may go to -o FILE or a CI log; NO_COLOR is honoured by never colouring).
    It reads no markup (a value such as `[/]` or `[link=...]` is shown as written, never obeyed) and shows
    every control character in a string it renders as a visible escape."""
    import io

    return _text_console_class()(
        file=io.StringIO(),
        width=width or terminal_width(),
        highlight=False,
        soft_wrap=False,
        color_system=None,
        emoji=False,
        markup=False,
    )


@functools.lru_cache(maxsize=1)
def _text_console_class() -> Any:
    from rich.console import Console

    class TextConsole(Console):
        """Every string it renders (printed, a table cell, a title) has its controls escaped first, so rich
        lays out what will be shown (a raw ESC is zero columns wide to rich, four once escaped)."""

        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(visible(text), **kwargs)

    return TextConsole


def console_text(console: Any) -> str:
    """Everything a `text_console()` has rendered so far."""
    return str(console.file.getvalue())


Row = tuple[str, str] | str  # (lead, text): `text` wraps under itself after `lead`; a plain str stays whole

_ONE_CELL = str.maketrans("→—", "--")  # the non-ASCII characters envguard's own lines use: one column each


def _words(line: str) -> list[str]:
    """A printed command's shell words as written (quotes kept), split at the spaces outside quotes; a
    trailing `# comment` is one piece."""
    words: list[str] = []
    word, quote, escaped = "", "", False
    for at, char in enumerate(line):
        if char == "#" and not word and not quote:  # a comment to the end: one piece (a break would end it)
            return [*words, line[at:]]
        if escaped or (quote and char != quote) or (not quote and char not in " '\"\\"):
            word, escaped = word + char, False
        elif char == " " and not quote:
            words, word = ([*words, word] if word else words), ""
        elif char == "\\" and quote != "'":
            word, escaped = word + char, True
        else:  # a quote opens or closes
            word, quote = word + char, ("" if quote == char else char)
    return [*words, word] if word else words


def _command(line: str, width: int | None) -> str:
    """A command row at `width`: whole where it fits (or into a pipe), else wrapped between its words with the
    shell's line continuation (` \\`), the rest indented four more: it still pastes and runs as printed. A
    word longer than the line stays whole."""
    if width is None or len(line) <= width:
        return line
    indent = line[: len(line) - len(line.lstrip(" "))]
    out: list[str] = []
    current = indent
    for word in _words(line.strip()):
        if current.strip() and len(current) + 1 + len(word) + 2 > width:
            out.append(current + " \\")
            current = indent + "    " + word
        else:
            current = f"{current} {word}" if current.strip() else current + word
    return "\n".join([*out, current])


def fitted(rows: Sequence[Row], width: int | None) -> str:
    """Report lines at `width` columns: each (lead, text) row as `lead + text`, its continuation lines
    indented under the text (rich's word wrap; a word longer than the line folds, nothing is cut short); a
    plain str row (a command) wrapped between its words with the shell's ` \\`, so it pastes and runs as
    printed. `width` None (a pipe, a
    file: envguard.terminal.line_width) or everything fitting: one line a row, without importing rich."""
    lines = [_command(row, width) if isinstance(row, str) else row[0] + row[1] for row in rows]
    if width is None or all(
        isinstance(row, str) or (len(line) <= width and line.translate(_ONE_CELL).isascii())
        for row, line in zip(rows, lines, strict=True)
    ):
        return "".join(f"{line}\n" for line in lines)
    from rich.table import Table

    console = text_console(width)
    for row, line in zip(rows, lines, strict=True):
        if isinstance(row, str) or not row[0]:
            console.print(line if isinstance(row, str) else row[1], soft_wrap=isinstance(row, str))
            continue
        grid = Table.grid(padding=0)
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        grid.add_row(*row)
        console.print(grid)
    return "".join(f"{line.rstrip()}\n" for line in console_text(console).splitlines())


def progress_wanted(style: str = "human") -> bool:
    """Progress bars only for a person: stderr is a terminal and the output is not JSON."""
    try:
        return style != "json" and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def progress_bar(label: str, total: int, shown: bool) -> Iterator[Callable[..., None]]:
    """A rich progress bar on stderr while the block runs; yields `advance(*_, label=None)` (thread-safe; a
    label replaces the description). When not `shown`, advancing does nothing and nothing is printed."""
    if not shown or total <= 0:
        yield lambda *_, **__: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(label, total=total)

    def advance(*_: Any, label: str | None = None) -> None:
        bar.update(task, advance=1, description=label)  # None keeps the description

    with bar:
        yield advance


@contextlib.contextmanager
def waiting(label: str, shown: bool) -> Iterator[None]:
    """A spinner with `label` on stderr while the block runs (a solve, the probe), when `shown`."""
    if not shown:
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(label):
        yield


# --- the one presenter
# ----------------------------------------------------------------------------------------

Style = Literal["human", "json", "markdown"]


class Views:
    """How one command's result is shown: its JSON body, its human view and (where it fits) Markdown (a plain
    class: a dataclass costs more to create than the check fast path has to spare)."""

    __slots__ = ("data", "human", "markdown")

    def __init__(
        self,
        data: Callable[[], Mapping[str, Any]],
        human: Callable[[], str],
        markdown: Callable[[], str] | None = None,
    ) -> None:
        self.data, self.human, self.markdown = data, human, markdown


def document(data: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON document: `schema_version` first (the one version, envguard.model.SCHEMA_VERSION), then the
    fields."""
    return {"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "schema_version"}}


def render(views: Views, style: Style) -> str:
    """The result as text in `style` (Markdown falls back to the human view where a command has none)."""
    if style == "json":
        return dumps(document(views.data()))
    if style == "markdown" and views.markdown is not None:
        return views.markdown()
    return views.human()


_TAKEN: contextvars.ContextVar[list[tuple[Views, Style]] | None] = contextvars.ContextVar(
    "envguard_taken", default=None
)


def present(views: Views, style: Style, output: str | None) -> None:
    """Render and write to `output` (atomically) or stdout; inside `taking()`, what would go to stdout is
    kept instead."""
    taken = _TAKEN.get()
    if taken is not None and (not output or output == "-"):
        taken.append((views, style))
        return
    emit(render(views, style), output)


@contextlib.contextmanager
def taking() -> Iterator[list[tuple[Views, Style]]]:
    """While the block runs, the results commands present to stdout are kept (their views and the style
    asked), not printed: a caller in this process renders them itself (the notebook extension's rich
    display). `-o FILE` is still written."""
    kept: list[tuple[Views, Style]] = []
    token = _TAKEN.set(kept)
    try:
        yield kept
    finally:
        _TAKEN.reset(token)


def md_escape(text: str | None, empty: str = "") -> str:
    """Text safe inside Markdown (table cells included): no table breaks, no emphasis, no code span, link or
    HTML tag, one line (a line break is a space; any other control character a visible escape)."""
    if not text:
        return empty
    return oneline(text.replace("\n", " ")).translate(_MD)


_MD = str.maketrans({c: "\\" + c for c in "\\|*_`[]<>"})


@contextlib.contextmanager
def report_on_error(command: str, style: Style, output: str | None) -> Iterator[None]:
    """Write the -o FILE report on every exit path: when the command fails, the file holds the error (so a CI
    step that publishes it with `if: always()` shows why instead of failing on a missing file); the error
    itself still reaches the boundary."""
    try:
        yield
    except EnvguardError as exc:
        _error_report(command, str(exc), exc.exit_code, style, output)
        raise
    except KeyboardInterrupt:
        _error_report(command, "interrupted", EXIT_INTERRUPTED, style, output)
        raise
    except Exception as exc:
        _error_report(command, f"internal error ({type(exc).__name__})", EXIT_BUG, style, output)
        raise


def _error_report(command: str, message: str, code: int, style: Style, output: str | None) -> None:
    if not output or output == "-":
        return
    if style == "json":
        text = dumps(document({"command": command, "passed": False, "exit_code": code, "error": message}))
    elif style == "markdown":
        text = f"### ❌ envguard {command}: error (exit {code})\n\n```\nenvguard: error: {message}\n```\n"
    else:
        text = f"envguard {command}: error (exit {code}): {message}\n"
    # as a successful run's: through onto a FIFO or a device (never a rename over /dev/null); a path that is
    # not UTF-8 written as stderr shows it (backslash escapes)
    data = scrub(text).encode("utf-8", "backslashreplace")
    with contextlib.suppress(OSError, EnvguardError):  # the file cannot be written: the original error stands
        write_output(Path(output), data)
