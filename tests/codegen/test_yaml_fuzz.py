"""Property: `opgen generate` on a randomly mutated copy of the real YAML files either succeeds with a tree
that imports, or exits 2 with a located `file:line:` message and leaves generated/ untouched; never a
traceback. The generator runs in-process; the import check runs in a subprocess for the first few successes
only, to bound the cost (OPGEN_FUZZ_EXAMPLES=500 for a longer run)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from codegen.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FILES = ("native_functions.yaml", "derivatives.yaml")
ORIGINAL = {name: (ROOT / name).read_bytes() for name in FILES}
KEYS = [b"func", b"variants", b"dispatch", b"pointwise", b"promote", b"dtypes", b"promote_scalars", b"zero_dim",
        b"same_dtype", b"doc", b"name", b"self", b"other", b"result", b"output_differentiability", b"CPU", b"grad",
        b"x"]
JUNK = [b"\xff", b"\x00", b"\x1b[31m", b"&a [1]", b"*a", b"!!python/object:os.system", b"{", b"]", b": :", b"\t",
        b"- ", b"? ", b"'", b'"', b"abs", b"[eval][0]('1')", b"__class__", b"\xe2\x80\xae", b"---\n", b"%YAML 1.1\n"]
LOCATED = re.compile(r"(native_functions|derivatives)\.yaml:\d+(:\d+)?: ")
MAX_IMPORT_CHECKS = 2


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(FILES))
    data = ORIGINAL[name]
    lines = data.split(b"\n")
    kind = draw(st.sampled_from(["flip", "delete", "duplicate", "rename", "swap", "truncate", "junk"]))
    i = draw(st.integers(0, len(lines) - 1))
    if kind == "flip":
        pos = draw(st.integers(0, len(data) - 1))
        data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos + 1:]
    elif kind == "delete":
        data = b"\n".join(lines[:i] + lines[i + 1:])
    elif kind == "duplicate":
        data = b"\n".join(lines[:i + 1] + lines[i:])
    elif kind == "rename":
        keyed = [j for j, line in enumerate(lines) if b":" in line]
        j = keyed[i % len(keyed)]
        key, _, rest = lines[j].partition(b":")
        indent = key[: len(key) - len(key.lstrip(b" -"))]
        lines[j] = indent + draw(st.sampled_from(KEYS)) + b":" + rest
        data = b"\n".join(lines)
    elif kind == "swap":
        keyed = [j for j, line in enumerate(lines) if b": " in line]
        a, b = keyed[i % len(keyed)], keyed[draw(st.integers(0, len(keyed) - 1))]
        ka, _, va = lines[a].partition(b": ")
        kb, _, vb = lines[b].partition(b": ")
        lines[a], lines[b] = ka + b": " + vb, kb + b": " + va
        data = b"\n".join(lines)
    elif kind == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    else:
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.sampled_from(JUNK)) + data[pos:]
    return name, data


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    for name in ("runtime", "templates", "generated"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    out = root / "generated"
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_mutated_yaml_generates_or_fails_located(project: Path) -> None:
    imports_checked = [0]

    @settings(max_examples=int(os.environ.get("OPGEN_FUZZ_EXAMPLES", "20")), deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck), database=None)
    @given(mutation())
    def check(case: tuple[str, bytes]) -> None:
        name, data = case
        for f in FILES:
            (project / f).write_bytes(data if f == name else ORIGINAL[f])
        before = snapshot(project)
        result = CliRunner().invoke(main, ["generate", "--root", str(project)])
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"traceback for a mutation of {name}") from result.exception
        assert result.exit_code in (0, 2), result.output
        if result.exit_code == 2:
            assert LOCATED.search(result.output), result.output
            assert snapshot(project) == before
            return
        if imports_checked[0] < MAX_IMPORT_CHECKS and snapshot(project) != before:
            imports_checked[0] += 1
            run = subprocess.run([sys.executable, "-c", "import generated as G; G.ones(2) + 1"], cwd=project,
                                 capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, run.stderr[-2000:]

    check()
