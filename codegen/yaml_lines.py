"""YAML reading that keeps line numbers and rejects duplicate keys."""

from __future__ import annotations

from typing import Any

import yaml

from codegen.errors import Diagnostic, LoadError, Location


class LocatedMap(dict):
    """A YAML mapping that remembers the line of the mapping and of each key (lines count from 1)."""

    line: int
    key_lines: dict[str, int]


class _Loader(yaml.SafeLoader):
    file: str
    duplicates: list[Diagnostic]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LocatedMap:  # type: ignore[override]
        result = LocatedMap()
        result.line = node.start_mark.line + 1
        result.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if key in result.key_lines:
                self.duplicates.append(Diagnostic(
                    Location(self.file, line),
                    f"duplicate key '{key}' (first given on line {result.key_lines[key]}); remove one"))
                continue
            result[key] = self.construct_object(value_node, deep=deep)
            result.key_lines[key] = line
        return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _Loader.construct_mapping)


def load_entries(text: str, file: str) -> list[LocatedMap]:
    """Parse a YAML file that must hold a list of mappings; errors name `file:line`."""
    loader = _Loader(text)
    loader.file = file
    loader.duplicates = []
    try:
        data: Any = loader.get_single_data()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(e, "problem", None) or str(e)
        raise LoadError([Diagnostic(Location(file, line), f"invalid YAML: {problem}")]) from None
    finally:
        loader.dispose()
    if loader.duplicates:
        raise LoadError(loader.duplicates)
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(e, LocatedMap) for e in data):
        raise LoadError([Diagnostic(Location(file, 1), "expected a list of entries ('- func: ...')")])
    return data
