"""Settings applied over a DataPipe graph (torch.utils.data.graph_settings): sharding, shuffling, seeds.
DataLoader applies them (Note [DataPipes under a DataLoader] in dataloader.py)."""

from __future__ import annotations

import inspect
import random
import warnings
from typing import Any

from runtime.utils.data.datapipes.iter.combinatorics import draw_seed
from runtime.utils.data.datapipes.iter.sharding import SHARDING_PRIORITIES
from runtime.utils.data.graph import DataPipeGraph, traverse_dps


def get_all_graph_pipes(graph: DataPipeGraph) -> list[Any]:
    """Every pipe of the graph once, from the top down."""
    seen: set[int] = set()
    out: list[Any] = []

    def walk(g: DataPipeGraph) -> None:
        for dp_id, (dp, sub) in g.items():
            if dp_id not in seen:
                seen.add(dp_id)
                out.append(dp)
                walk(sub)

    walk(graph)
    return out


def _has_method(dp: Any, *names: str) -> bool:
    return all(inspect.ismethod(getattr(dp, n, None)) for n in names)


def apply_sharding(datapipe: Any, num_of_instances: int, instance_id: int,
                   sharding_group: SHARDING_PRIORITIES = SHARDING_PRIORITIES.DEFAULT) -> Any:
    """Shard every pipe with `apply_sharding` (sharding_filter); two on one path is a RuntimeError."""

    def walk(g: DataPipeGraph, applied: Any) -> None:
        for dp, sub in g.values():
            here = applied
            if _has_method(dp, "apply_sharding"):
                if applied is not None:
                    raise RuntimeError(f"Sharding twice on a single pipeline is likely unintended and will cause data "
                                       f"loss. Sharding already applied to {applied} while trying to apply to {dp}")
                if len(inspect.signature(dp.apply_sharding).parameters) < 3:
                    dp.apply_sharding(num_of_instances, instance_id)
                else:
                    dp.apply_sharding(num_of_instances, instance_id, sharding_group=sharding_group)
                here = dp
            walk(sub, here)

    walk(traverse_dps(datapipe), None)
    return datapipe


def apply_shuffle_settings(datapipe: Any, shuffle: bool | None = None) -> Any:
    """Turn every shuffle of the graph on or off (None: leave them); shuffle=True on a graph without one
    appends `shuffle()` (with a warning)."""
    if shuffle is None:
        return datapipe
    shufflers = [dp for dp in get_all_graph_pipes(traverse_dps(datapipe)) if _has_method(dp, "set_shuffle", "set_seed")]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. Adding one at the end. "
                      "Be aware that the default buffer size might not be sufficient for your task.", stacklevel=2)
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for s in shufflers:
        s.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe: Any, rng: Any) -> Any:
    """Give every random pipe of the graph (one with `set_seed`) a seed drawn from `rng` (a G.Generator)."""
    for dp in get_all_graph_pipes(traverse_dps(datapipe)):
        if _has_method(dp, "set_seed"):
            dp.set_seed(draw_seed(rng))
    return datapipe


def reseed_random_pipes(datapipe: Any, seed: int) -> Any:
    """Give every random pipe of the graph a seed drawn from `random.Random(seed)`: the same `seed` gives
    the same seeds (what every DataLoader worker of one pass uses, so their shuffles agree)."""
    rng = random.Random(seed)
    for dp in get_all_graph_pipes(traverse_dps(datapipe)):
        if _has_method(dp, "set_seed"):
            dp.set_seed(rng.getrandbits(63))
    return datapipe


__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_settings", "get_all_graph_pipes"]
