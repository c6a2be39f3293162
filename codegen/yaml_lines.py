"""YAML reading that keeps line numbers and refuses malformed input with `file:line: message`.

Note [Reading untrusted YAML]
The YAML files are input from people, so every way they can be wrong ends in a located `LoadError`, never a
traceback, and a hostile file cannot make opgen run long or take memory:
  - bytes: at most `MAX_BYTES`, UTF-8 (the line of the first bad byte is reported);
  - the stream: YAML's own reader refuses control characters; strings built with escapes ("\\x01") may not
    hold them either (they would reach file names, generated code or the terminal through `opgen show`);
  - the document is composed into nodes (libyaml's C composer where installed, which keeps line numbers)
    and built by `_Builder`, not by PyYAML's constructor: mapping keys must be strings, duplicate keys are
    refused, nesting is at most `MAX_DEPTH` levels, and an alias is refused outright: the project's files
    use none, and expanding aliases is what an alias bomb ("billion laughs") abuses. The composer makes an
    alias the very node of its anchor, so composing a bomb is cheap and the builder refuses the second
    visit of a node before expanding anything.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from codegen.errors import Diagnostic, LoadError, Location

MAX_BYTES = 4 << 20
MAX_DEPTH = 16
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LocatedMap(dict):
    """A YAML mapping that remembers the line of the mapping and of each key (lines count from 1)."""

    line: int
    key_lines: dict[str, int]


def _error(file: str, line: int, message: str) -> LoadError:
    return LoadError([Diagnostic(Location(file, line), message)])


def read_source(path: Path, file: str) -> str:
    """The text of a YAML file: size-checked, decoded as UTF-8, or a located error."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise _error(file, 1, f"file is {size} bytes; the limit is {MAX_BYTES}")
        data = path.read_bytes()
    except OSError as e:
        raise _error(file, 1, f"cannot read: {e.strerror}") from None
    return decode(data, file)


def decode(data: bytes, file: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise _error(file, line, f"not UTF-8: byte 0x{data[e.start]:02x} at offset {e.start} ({e.reason})") from None


_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null"))
_STR_TAG = "tag:yaml.org,2002:str"
# The characters of Unicode categories Cc (C0 and C1 controls) and Cs (surrogates) but newline and tab:
# those a string may not hold (Note [Reading untrusted YAML]); both categories are fixed ranges.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_MAP_TAG, _SEQ_TAG = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class _Builder:
    """YAML events -> Python values (LocatedMap, list, str/int/float/bool/None), without recursion
    (Note [Reading untrusted YAML]): one pass over libyaml's event stream, a stack of open collections."""

    def __init__(self, file: str, loader: Any) -> None:
        self.file = file
        self.loader = loader
        self.problems: list[Diagnostic] = []
        self.scalars = yaml.constructor.SafeConstructor()

    def fail(self, event: yaml.Event, message: str) -> LoadError:
        return _error(self.file, _line(event), message)

    def scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR_TAG:  # most scalars: PyYAML's constructor returns a str node's value as it is
            value: Any = event.value
        elif tag not in _SCALAR_TAGS:
            raise self.fail(event, f"unsupported tag '{tag}'; use plain strings, numbers and true/false")
        else:
            start: Any = event.start_mark  # libyaml's C Mark: the same fields as yaml.Mark
            end: Any = event.end_mark
            node = yaml.ScalarNode(tag, event.value, start, end, event.style)
            try:
                value = self.scalars.construct_object(node)
            except (yaml.YAMLError, ValueError, OverflowError) as e:
                raise self.fail(event, f"bad value {event.value[:40]!r}: {e}") from None
        if isinstance(value, str):
            bad = _CONTROL.search(value)
            if bad is not None:
                raise self.fail(event, f"control character U+{ord(bad.group()):04X} in a string")
        return value

    def build(self) -> tuple[Any, int]:
        """The document's value and the line it starts on ((None, 1) for an empty stream)."""
        loader = self.loader
        # each open collection: [value, pending key or _NO_KEY, key event]
        stack: list[list[Any]] = []
        root: Any = None
        root_line = 1
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.StreamStartEvent | yaml.StreamEndEvent | yaml.DocumentEndEvent):
                continue
            if isinstance(event, yaml.DocumentStartEvent):
                if root is not None or stack:
                    raise self.fail(event, "expected a single YAML document")
                continue
            if isinstance(event, yaml.AliasEvent):
                raise self.fail(event, f"aliases ('*{event.anchor}') are not supported; write the value out")
            if isinstance(event, yaml.CollectionEndEvent):
                value = stack.pop()[0]
                self._add(stack, value, event)
                if not stack:
                    root = value
                continue
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                is_map = isinstance(event, yaml.MappingStartEvent)
                if event.tag not in (None, "!", _MAP_TAG if is_map else _SEQ_TAG):
                    raise self.fail(event, f"unsupported tag '{event.tag}'")
                if len(stack) >= MAX_DEPTH:
                    raise self.fail(event, f"nesting is deeper than {MAX_DEPTH} levels")
                if stack and stack[-1][1] is _NO_KEY and isinstance(stack[-1][0], LocatedMap):
                    raise self.fail(event, "a mapping key must be a plain string, not a list or mapping")
                if is_map:
                    value = LocatedMap()
                    value.line = _line(event)
                    value.key_lines = {}
                else:
                    value = []
                if not stack:
                    root_line = _line(event)
                stack.append([value, _NO_KEY, None])
                continue
            value = self.scalar(event)  # a ScalarEvent
            if not stack:
                root, root_line = value, _line(event)
                continue
            top = stack[-1]
            if isinstance(top[0], LocatedMap) and top[1] is _NO_KEY:
                if not isinstance(value, str):
                    raise self.fail(event, f"a mapping key must be a string, not {type(value).__name__} "
                                           f"({event.value!r}); quote it")
                top[1], top[2] = value, event
                continue
            self._add(stack, value, event)
        return root, root_line

    def _add(self, stack: list[list[Any]], value: Any, event: yaml.Event) -> None:
        if not stack:
            return
        top = stack[-1]
        container = top[0]
        if isinstance(container, list):
            container.append(value)
            return
        key, key_event = top[1], top[2]
        top[1], top[2] = _NO_KEY, None
        line = key_event.start_mark.line + 1
        if key in container.key_lines:
            self.problems.append(Diagnostic(
                Location(self.file, line),
                f"duplicate key '{key}' (first given on line {container.key_lines[key]}); remove one"))
            return
        container[key] = value
        container.key_lines[key] = line


_NO_KEY = object()


def _parse(text: str, file: str) -> tuple[Any, int, list[int]]:
    """The document, its first line, and the line of each top-level list item."""
    if len(text) > MAX_BYTES:
        raise _error(file, 1, f"file is {len(text)} characters; the limit is {MAX_BYTES}")
    try:
        loader = _LOADER(text)
    except yaml.YAMLError as e:
        raise _located(e, text, file) from None
    builder = _Builder(file, loader)
    try:
        data, line = builder.build()
    except yaml.YAMLError as e:
        raise _located(e, text, file) from None
    finally:
        loader.dispose()
    if builder.problems:
        raise LoadError(builder.problems)
    return data, line, []


# Hints for libyaml's syntax errors, by a phrase of its problem (what a person most often did wrong).
_YAML_HINTS = (
    ("mapping values are not allowed",
     "a key is indented differently from the keys above it, or a value holds ': ' (quote such a value); the keys "
     "of one entry start in the same column as its 'func:'"),
    ("did not find expected '-' indicator",
     "every entry starts with '- ' in the same column as the entries above it; check this line's indentation"),
    ("did not find expected key",
     "a line is indented more or less than the keys around it, or a '- ' is missing before a new entry"),
    ("could not find expected ':'", "a key needs ': ' after it (key: value)"),
    ("found character '\\t'", "YAML indents with spaces, never tabs"),
    ("while scanning a quoted scalar", "a quoted value is not closed on this line or a later one"),
)


def _located(e: yaml.YAMLError, text: str, file: str) -> LoadError:
    mark = getattr(e, "problem_mark", None)
    column = 0
    if mark is not None:
        line, column = mark.line + 1, mark.column + 1
    elif isinstance(getattr(e, "position", None), int):  # a ReaderError: a character offset
        line = text.count("\n", 0, e.position) + 1  # type: ignore[attr-defined]
    else:
        line = 1
    problem = getattr(e, "problem", None) or getattr(e, "reason", None) or str(e).splitlines()[0]
    if type(e).__name__ == "ReaderError":
        problem = str(e).splitlines()[0]
    lines = text.splitlines()
    source = lines[line - 1] if 0 < line <= len(lines) else None
    note = next((hint for phrase, hint in _YAML_HINTS if phrase in str(problem) or phrase in str(e)), None)
    if source is not None and column > len(source) + 1:
        column = len(source) + 1
    return LoadError([Diagnostic(Location(file, line), f"invalid YAML: {problem}", column if source else 0, source,
                                 note)])


def load_entries(text: str, file: str) -> list[LocatedMap]:
    """Parse a YAML file that must hold a list of mappings; errors name `file:line`."""
    data, line, _ = _parse(text, file)
    if data is None:
        return []
    if not isinstance(data, list):
        raise _error(file, line, "expected a list of entries ('- func: ...')")
    for item in data:
        if not isinstance(item, LocatedMap):
            raise _error(file, line, f"expected a list of entries ('- func: ...'), found {_kind(item)} in it")
    return data


def _line(event: yaml.Event) -> int:
    """The 1-based line where `event` starts (every event the parser emits has a start mark)."""
    return event.start_mark.line + 1 if event.start_mark is not None else 1


def _kind(value: object) -> str:
    return {list: "a list", type(None): "an empty item"}.get(type(value), f"a {type(value).__name__}")
