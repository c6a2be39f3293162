"""Error types of the generator. Every user-facing error carries where it happened."""

from __future__ import annotations

from dataclasses import dataclass


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
    location: Location
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class LoadError(OpgenError):
    """One or more problems found while loading the YAML files, all reported together."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics, key=lambda d: (d.location, d.message))
        super().__init__("\n".join(str(d) for d in self.diagnostics))
