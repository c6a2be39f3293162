"""The opgen CLI: exit codes, determinism, atomicity, and a new op added only in YAML (in a repo copy)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen import gen
from codegen.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the repository's project files (YAML, templates, codegen, runtime, generated)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("codegen", "runtime", "templates", "generated"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=ignore)
    for name in ("native_functions.yaml", "derivatives.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    out = root / "generated"
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def run(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_repository_generated_is_fresh() -> None:
    assert gen.diff(ROOT, gen.generate(ROOT)) == "", "generated/ is stale: run `opgen generate`"


def test_generation_is_deterministic(project: Path) -> None:
    first = gen.generate(project)
    second = gen.generate(project)
    assert first == second
    run("generate", "--root", str(project))
    before = snapshot(project)
    result = run("generate", "--root", str(project))
    assert result.exit_code == 0 and "0 changed" in result.output
    assert snapshot(project) == before


def test_check_exit_codes_and_diff(project: Path) -> None:
    assert run("generate", "--root", str(project)).exit_code == 0
    assert run("check", "--root", str(project)).exit_code == 0
    ops = project / "generated" / "_ops.py"
    ops.write_text(ops.read_text() + "# hand edit\n")
    result = run("check", "--root", str(project))
    assert result.exit_code == 1
    assert "-# hand edit" in result.output and "a/generated/_ops.py" in result.output


def test_bad_yaml_exits_2_and_leaves_generated_untouched(project: Path) -> None:
    before = snapshot(project)
    nf = project / "native_functions.yaml"
    nf.write_text(nf.read_text() + "\n- func: broken(Tensr self) -> Tensor\n  pointwise: self\n")
    result = run("generate", "--root", str(project))
    assert result.exit_code == 2
    line = nf.read_text().splitlines().index("- func: broken(Tensr self) -> Tensor") + 1
    assert f"native_functions.yaml:{line}: bad schema: unknown type 'Tensr'" in result.output
    assert "Traceback" not in result.output
    assert snapshot(project) == before


def test_template_error_leaves_generated_untouched(project: Path) -> None:
    before = snapshot(project)
    template = project / "templates" / "methods.py.j2"
    template.write_text(template.read_text() + "{{ no_such_variable }}\n")
    with pytest.raises(Exception, match="no_such_variable"):
        gen.write_files(project, gen.generate(project))
    assert snapshot(project) == before


def test_list_and_show(project: Path) -> None:
    listing = run("list", "--root", str(project))
    assert listing.exit_code == 0
    assert any(line.split()[:1] == ["add.Tensor"] and "AddBackward0" in line for line in listing.output.splitlines())
    shown = run("show", "--root", str(project), "mul.Tensor")
    assert shown.exit_code == 0
    assert "mul.Tensor(Tensor self, Tensor other) -> Tensor" in shown.output
    assert "self: grad * other" in shown.output
    missing = run("show", "--root", str(project), "nope")
    assert missing.exit_code == 2


def test_outside_a_project_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--root", str(tmp_path)])
    assert result.exit_code == 2 and "no native_functions.yaml" in result.output


def test_help_everywhere() -> None:
    for args in ([], ["generate"], ["check"], ["list"], ["show"]):
        result = CliRunner().invoke(main, [*args, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output


NEW_OP = """
- func: cube(Tensor self) -> Tensor
  variants: function, method
  pointwise: self * self * self
"""
NEW_DERIVATIVE = """
- name: cube(Tensor self) -> Tensor
  self: grad * 3 * self * self
"""
CHECK_NEW_OP = """
import numpy as np
import generated as G
x = G.tensor([-2.0, -0.5, 0.0, 1.5], dtype=G.float64, requires_grad=True)
y = G.cube(x)
assert np.allclose(y.detach().numpy(), x.detach().numpy() ** 3), y
assert np.allclose(x.cube().detach().numpy(), x.detach().numpy() ** 3)
y.sum().backward()
assert np.allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2), x.grad
assert G.autograd.gradcheck(G.cube, (G.tensor([0.3, -1.2], dtype=G.float64, requires_grad=True),))
z = G.tensor([1, -3]); z.cube_(); assert z.tolist() == [1, -27]
out = G.empty(2); G.cube(G.tensor([2.0, 3.0]), out=out); assert out.tolist() == [8.0, 27.0]
print("cube ok", type(y.grad_fn).__name__)
"""


def test_new_pointwise_op_from_yaml_only(project: Path) -> None:
    (project / "native_functions.yaml").write_text((project / "native_functions.yaml").read_text() + NEW_OP)
    (project / "derivatives.yaml").write_text((project / "derivatives.yaml").read_text() + NEW_DERIVATIVE)
    subprocess.run([sys.executable, "-m", "codegen", "generate", "--root", str(project)], check=True, cwd=project)
    assert "def cube(" in (project / "generated" / "_ops.py").read_text()
    env = {"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", CHECK_NEW_OP], cwd=project, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "cube ok CubeBackward0" in done.stdout
