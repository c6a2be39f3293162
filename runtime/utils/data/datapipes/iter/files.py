"""Pipes over files: list_files (the paths under roots, filtered by glob masks), open_files (each path opened,
as (path, stream)) and read_from_stream (the contents of each stream, in chunks)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import IterDataPipe
from runtime.utils.data.datapipes.iter.utils import IterableWrapperIterDataPipe


class StreamWrapper:
    """A file object handed along a pipeline: every attribute is the file's; iterating reads lines; `close`
    closes it (also when the wrapper is collected)."""

    def __init__(self, file_obj: Any, name: str | None = None) -> None:
        self.file_obj, self.name, self.closed = file_obj, name, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["file_obj"], name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.file_obj)

    def __next__(self) -> Any:
        return next(self.file_obj)

    def close(self) -> None:
        if not self.closed:
            self.file_obj.close()
            self.closed = True

    def __del__(self) -> None:
        if not self.__dict__.get("closed", True):
            self.close()

    def __repr__(self) -> str:
        return f"StreamWrapper<{self.name or self.file_obj!r}>"


def match_masks(name: str, masks: str | list[str]) -> bool:
    """Whether a file name matches a glob mask (or any of a list; no mask matches everything)."""
    if not masks:
        return True
    if isinstance(masks, str):
        return fnmatch.fnmatch(name, masks)
    return any(fnmatch.fnmatch(name, m) for m in masks)


def _paths_under(root: str, masks: str | list[str], recursive: bool, abspath: bool,
                 non_deterministic: bool) -> Iterator[str]:
    if os.path.isfile(root):
        path = os.path.abspath(root) if abspath else root
        if match_masks(os.path.basename(path), masks):
            yield path
        return

    def fail(err: OSError) -> None:
        raise err

    for path, dirs, files in os.walk(root, onerror=fail):
        if abspath:
            path = os.path.abspath(path)
        if not non_deterministic:
            files.sort()
            dirs.sort()
        for f in files:
            if match_masks(f, masks):
                yield os.path.join(path, f)
        if not recursive:
            break


@functional_datapipe("list_files")
class FileListerIterDataPipe(IterDataPipe):
    """The paths of the files under each root (a path, paths, or a pipe of paths) whose names match `masks`,
    sorted per directory unless `non_deterministic`; `recursive` descends into sub-directories (functional
    name `list_files`). `length` is what `len()` reports (-1: no length)."""

    def __init__(self, root: str | Sequence[str] | IterDataPipe = ".", masks: str | list[str] = "", *,
                 recursive: bool = False, abspath: bool = False, non_deterministic: bool = False,
                 length: int = -1) -> None:
        if isinstance(root, str):
            root = [root]
        self.datapipe = root if isinstance(root, IterDataPipe) else IterableWrapperIterDataPipe(root)
        self.masks, self.recursive, self.abspath = masks, recursive, abspath
        self.non_deterministic, self.length = non_deterministic, length

    def __iter__(self) -> Iterator[str]:
        for root in self.datapipe:
            yield from _paths_under(root, self.masks, self.recursive, self.abspath, self.non_deterministic)

    def __len__(self) -> int:
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


@functional_datapipe("open_files")
class FileOpenerIterDataPipe(IterDataPipe):
    """(path, StreamWrapper of the opened file) for each path, `mode` "r"/"rt"/"t" (text) or "rb"/"b"
    (binary); functional name `open_files`."""

    def __init__(self, datapipe: Iterable[str], mode: str = "r", encoding: str | None = None,
                 length: int = -1) -> None:
        if mode not in ("b", "t", "rb", "rt", "r"):
            raise ValueError(f"Invalid mode {mode}")
        if "b" in mode and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.datapipe, self.mode, self.encoding, self.length = datapipe, mode, encoding, length

    def __iter__(self) -> Iterator[tuple[str, StreamWrapper]]:
        mode = "r" + self.mode if self.mode in ("b", "t") else self.mode
        for path in self.datapipe:
            if not isinstance(path, str):
                raise TypeError(f"Expected string type for pathname, but got {type(path)}")
            yield path, StreamWrapper(open(path, mode, encoding=self.encoding), path)

    def __len__(self) -> int:
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


@functional_datapipe("read_from_stream")
class StreamReaderIterDataPipe(IterDataPipe):
    """(path, data) for each chunk of `chunk` units read from each (path, stream) (all of it at once for
    None), closing each stream at its end; functional name `read_from_stream`."""

    def __init__(self, datapipe: IterDataPipe, chunk: int | None = None) -> None:
        self.datapipe, self.chunk = datapipe, chunk

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for path, stream in self.datapipe:
            while True:
                data = stream.read(self.chunk) if self.chunk is not None else stream.read()
                if not data:
                    stream.close()
                    break
                yield path, data
