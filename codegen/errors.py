"""Error types of the generator. Every user-facing error carries where it happened."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """"; did you mean 'x'?" for the candidates closest to a misspelt `word`, or "" when none is close."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


@dataclass(frozen=True, order=True)
class Location:
    """A place in a source file: `file:line` (lines count from 1)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class OpgenError(Exception):
    """Base class of every error opgen reports to a user."""


class SchemaParseError(OpgenError):
    """A function schema that does not parse. `column` counts from 1."""

    def __init__(self, schema: str, column: int, message: str) -> None:
        self.schema = schema
        self.column = column
        self.message = message
        caret = " " * (column - 1) + "^"
        shown = "".join(c if c.isprintable() else "?" for c in schema)  # one line, the caret still under it
        super().__init__(f"{message} (column {column})\n    {shown}\n    {caret}")


@dataclass(frozen=True)
class Diagnostic:
    """One problem at a place. With a `column` (from 1) and the `source` line it is shown as a compiler
    shows one: `file:line:col: error: message`, the line, a caret under the column, and a `note`."""

    location: Location
    message: str
    column: int = 0
    source: str | None = None
    note: str | None = None

    def __str__(self) -> str:
        if not self.column or self.source is None:
            return f"{self.location}: {self.message}" + (f"\n  note: {self.note}" if self.note else "")
        gutter = f"{self.location.line:>5} | "
        text, column = self.source.rstrip("\n"), self.column
        if len(text) > 100:  # a window of the line around the column
            lo = max(0, min(column - 60, len(text) - 100))
            text = ("..." if lo else "") + text[lo:lo + 100] + ("..." if lo + 100 < len(text) else "")
            column = column - lo + (3 if lo else 0)
        lines = [f"{self.location}:{self.column}: error: {self.message}", gutter + text,
                 " " * (len(gutter) - 2) + "| " + " " * (column - 1) + "^"]
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


class LoadError(OpgenError):
    """One or more problems found while loading the YAML files, all reported together."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics, key=lambda d: (d.location, d.message))
        super().__init__("\n".join(str(d) for d in self.diagnostics))
