"""The zip half of PyTorch's checkpoint format: records in an uncompressed zip archive.

Every record sits under one folder (`archive/`): `data.pkl` (the pickle, runtime/nn/checkpoint_pickle.py),
`data/<key>` (one storage's raw bytes each, in the byte order of the record `byteorder`), `version`
(the format's version, "3"), `.format_version` and `.storage_alignment`. Records are stored uncompressed
and each one's data starts at a multiple of 64 bytes of the file (the zip header is padded with an
extra field), as PyTorch writes them, so a reader may map them in place.
"""

from __future__ import annotations

import struct
import sys
import zipfile
from collections.abc import Iterable
from typing import IO, Any

ALIGNMENT = 64
FORMAT_VERSION = b"3\n"
_PAD_FIELD = 0x6F70  # the id of the extra field that pads a local header ("op"; readers skip unknown ids)
_PREFIX = "archive"


def _padding(offset: int, name: str, size: int) -> bytes:
    """An extra field that makes the data of a record whose local header starts at `offset` aligned."""
    header = 30 + len(name.encode())
    if size * 1.05 > zipfile.ZIP64_LIMIT:  # zipfile then adds a 20-byte zip64 field after ours
        header += 20
    need = -(offset + header + 4) % ALIGNMENT
    return struct.pack("<HH", _PAD_FIELD, need) + bytes(need)


def write_archive(fh: IO[bytes], pickled: bytes, storages: Iterable[tuple[str, memoryview]]) -> None:
    """Write a checkpoint archive of `pickled` (data.pkl) and the `(key, bytes)` storages to `fh`."""
    records: list[tuple[str, Any]] = [
        ("data.pkl", pickled), (".format_version", b"1"), (".storage_alignment", str(ALIGNMENT).encode()),
        ("byteorder", sys.byteorder.encode()),
    ]
    records += [(f"data/{key}", data) for key, data in storages]
    records.append(("version", FORMAT_VERSION))
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, data in records:
            info = zipfile.ZipInfo(f"{_PREFIX}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o600 << 16
            try:
                offset = zf.fp.tell()  # type: ignore[union-attr]
            except (AttributeError, OSError):
                offset = None  # an unseekable stream: no alignment
            if offset is not None:
                info.extra = _padding(offset, info.filename, len(data))
            zf.writestr(info, data)


class ArchiveReader:
    """The records of a checkpoint archive (`zf`, an open ZipFile); KeyError-free: a missing record is a
    ValueError naming it."""

    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        pickles = [n for n in zf.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise ValueError("no single data.pkl record: not a PyTorch-format checkpoint")
        self.prefix = pickles[0][: -len("data.pkl")]
        order = self.read("byteorder", optional=True)
        self.byteorder = order.decode("ascii", "replace") if order is not None else "little"
        if self.byteorder not in ("little", "big"):
            raise ValueError(f"unknown byte order {self.byteorder!r}")

    def read(self, name: str, optional: bool = False, size: int | None = None) -> bytes | None:
        full = self.prefix + name
        try:
            info = self.zf.getinfo(full)
        except KeyError:
            if optional:
                return None
            raise ValueError(f"the record {full!r} is missing") from None
        if size is not None and info.file_size != size:
            raise ValueError(f"the record {full!r} holds {info.file_size} bytes where {size} are expected")
        return self.zf.read(info)


def is_checkpoint_archive(zf: zipfile.ZipFile) -> bool:
    """Whether a zip archive is a PyTorch-format checkpoint (else: an opgen .npz, or something else)."""
    return any(n.endswith("/data.pkl") and n.count("/") == 1 for n in zf.namelist())
