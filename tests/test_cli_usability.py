"""The CLI's conveniences: --version, project discovery from a subdirectory, list filters, show suggestions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen.cli import find_project, main

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path | None = None) -> object:
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and result.output.startswith("opgen, version ")


def test_module_entry_point_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "codegen.cli", "list", "mm"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "MmBackward0" in done.stdout


def test_project_found_from_a_subdirectory() -> None:
    assert find_project(ROOT / "runtime" / "kernels") == ROOT
    result = run("show", "mm", cwd=ROOT / "runtime" / "kernels")
    assert result.exit_code == 0 and "mm(Tensor self, Tensor mat2) -> Tensor" in result.output


def test_no_project_anywhere_is_a_usage_error(tmp_path: Path) -> None:
    assert find_project(tmp_path) is None
    result = run("list", cwd=tmp_path)
    assert result.exit_code == 2 and "any parent directory" in result.output


def test_list_filters_by_wildcard_and_exact_name() -> None:
    lines = run("list", "--root", str(ROOT), "add*").output.splitlines()[1:]
    names = {line.split()[0] for line in lines}
    assert {"add.Tensor", "add_.Tensor", "add.out", "addmm"} <= names
    assert all(n.startswith("add") for n in names)
    exact = run("list", "--root", str(ROOT), "mm").output.splitlines()[1:]
    assert [line.split()[0] for line in exact] == ["mm"]


def test_list_with_no_match_exits_2() -> None:
    result = run("list", "--root", str(ROOT), "no_such_op*")
    assert result.exit_code == 2 and "no operator matches" in result.output


def test_show_lists_in_place_and_out_forms() -> None:
    out = run("show", "--root", str(ROOT), "add").output
    assert "add_.Tensor" in out and "add.out" in out and "add.Tensor" in out
    assert run("show", "--root", str(ROOT), "add_").output.count("(derived from") == 2


@pytest.mark.parametrize(("typo", "suggestion"), [("ad", "add"), ("sofmax", "softmax"), ("relu__", "relu_")])
def test_show_suggests_near_misses(typo: str, suggestion: str) -> None:
    result = run("show", "--root", str(ROOT), typo)
    assert result.exit_code == 2
    assert "did you mean" in result.output and suggestion in result.output
