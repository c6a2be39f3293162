"""The graph of a DataPipe (torch.utils.data.graph): the pipes it reads from, found in its attributes
(directly or inside lists, tuples, sets and dicts), recursively."""

from __future__ import annotations

from typing import Any

from runtime.utils.data.datapipes.datapipe import IterDataPipe, MapDataPipe

DataPipe = IterDataPipe | MapDataPipe
DataPipeGraph = dict[int, tuple[Any, "DataPipeGraph"]]


def _sources(datapipe: Any) -> list[Any]:
    found: list[Any] = []

    def visit(value: Any) -> None:
        if isinstance(value, (IterDataPipe, MapDataPipe)):
            found.append(value)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for v in value:
                visit(v)
        elif isinstance(value, dict):
            for v in value.values():
                visit(v)

    for value in vars(datapipe).values():
        visit(value)
    return found


def traverse_dps(datapipe: Any) -> DataPipeGraph:
    """{id(pipe): (pipe, the graph of its sources)}, from `datapipe` down; a pipe reached twice on one path
    (a cycle) is not followed again."""
    if not isinstance(datapipe, (IterDataPipe, MapDataPipe)):
        raise RuntimeError(f"Expected `IterDataPipe` or `MapDataPipe`, but {type(datapipe)} is found")

    def walk(dp: Any, on_path: frozenset[int]) -> DataPipeGraph:
        inner = on_path | {id(dp)}
        return {id(dp): (dp, {k: v for src in _sources(dp) if id(src) not in inner
                              for k, v in walk(src, inner).items()})}

    return walk(datapipe, frozenset())


def traverse(datapipe: Any, only_datapipe: bool | None = None) -> DataPipeGraph:
    return traverse_dps(datapipe)


__all__ = ["DataPipe", "DataPipeGraph", "traverse", "traverse_dps"]
