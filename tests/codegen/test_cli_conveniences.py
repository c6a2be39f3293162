"""The CLI's conveniences: --version, project discovery from a subdirectory, list filters, show suggestions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen.cli import find_project, main

ROOT = Path(__file__).resolve().parents[2]


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


def test_show_is_concise_by_default() -> None:
    out = run("show", "--root", str(ROOT), "add").output
    assert "add.Tensor" in out and "add.Scalar" in out
    assert "add_.Tensor" not in out and "add.out" not in out and "show --all add" in out
    assert " - " not in out and "[missing]" not in out  # no rows for keys without a kernel


def test_show_all_lists_in_place_and_out_forms() -> None:
    out = run("show", "--root", str(ROOT), "--all", "add").output
    assert "add_.Tensor" in out and "add.out" in out and "add.Tensor" in out
    assert "Meta" in out  # the whole table, keys without a kernel included
    out_block = out[out.index("\nadd.out\n"):].split("\n\n")[0]
    assert "not differentiable" in out_block and "AddBackward0" not in out_block
    assert run("show", "--root", str(ROOT), "add_").output.count("(derived from") == 2


def test_opgen_alone_prints_help_and_succeeds() -> None:
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 0 and "Usage" in result.output and "generate" in result.output


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flags_name_the_installed_version(flag: str) -> None:
    import generated as G

    result = CliRunner().invoke(main, [flag])
    assert result.exit_code == 0 and G.__version__ in result.output


def _scratch_project(tmp_path: Path) -> Path:
    import shutil

    for name in ("native_functions.yaml", "derivatives.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("templates", "runtime", "codegen"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def test_new_op_adds_a_skeleton_to_both_files(tmp_path: Path) -> None:
    project = _scratch_project(tmp_path)
    result = run("new-op", "--root", str(project), "cube", "--pointwise", "self * self * self",
                 "--derivative", "3 * grad * self * self")
    assert result.exit_code == 0, result.output
    native = (project / "native_functions.yaml").read_text()
    assert native.rstrip().endswith('pointwise: "self * self * self"')
    assert "cube(Tensor self) -> Tensor" in (project / "derivatives.yaml").read_text()
    shown = run("show", "--root", str(project), "cube")
    assert shown.exit_code == 0 and "CubeBackward0" in shown.output


@pytest.mark.parametrize(("args", "why"), [
    (["add"], "exists already"),
    (["bad_op", "--pointwise", "self +"], "not valid Python"),
    (["bad_grad", "--derivative", "grad * nosuchname"], "nosuchname"),
    (["2fast"], "not an operator name"),
])
def test_new_op_refusals_leave_the_files_as_they_were(tmp_path: Path, args: list[str], why: str) -> None:
    project = _scratch_project(tmp_path)
    before = {n: (project / n).read_bytes() for n in ("native_functions.yaml", "derivatives.yaml")}
    result = run("new-op", "--root", str(project), *args)
    assert result.exit_code == 2 and why in result.output, result.output
    assert {n: (project / n).read_bytes() for n in before} == before


@pytest.mark.parametrize(("typo", "suggestion"), [("ad", "add"), ("sofmax", "softmax"), ("relu__", "relu_")])
def test_show_suggests_near_misses(typo: str, suggestion: str) -> None:
    result = run("show", "--root", str(ROOT), typo)
    assert result.exit_code == 2
    assert "did you mean" in result.output and suggestion in result.output
