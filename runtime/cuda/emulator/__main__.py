"""`python3 -m runtime.cuda.emulator build [--jobs N] [PATTERN ...]`: compile the host libraries of every
generated CUDA source (or those whose path under generated/cuda contains a PATTERN) in parallel, so a test
run finds them in the disk cache. Prints what it built and how long it took."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from runtime.cuda import fixed as F
from runtime.cuda.emulator import engine


def sources(patterns: list[str]) -> list[str]:
    root = Path(F.source_path("cuda"))
    found = sorted(str(p) for p in root.rglob("*.cu"))
    return [p for p in found if not patterns or any(pat in os.path.relpath(p, root) for pat in patterns)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m runtime.cuda.emulator")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="compile host libraries of generated CUDA sources (cached on disk)")
    build.add_argument("--jobs", "-j", type=int, default=None, help="parallel compilers (default: CPUs)")
    build.add_argument("patterns", nargs="*", help="only sources whose path contains one of these")
    args = parser.parse_args(argv)
    paths = sources(args.patterns)
    if not paths:
        print("no generated CUDA sources matched", file=sys.stderr)
        return 1
    libs = engine.default_libraries()
    start = time.perf_counter()
    libs.build_all(paths, args.jobs)
    print(f"{len(paths)} host libraries ready in {time.perf_counter() - start:.1f} s "
          f"({libs.compiles} compiled, {len(paths) - libs.compiles} from the cache {libs.directory})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
