"""`python3 -m generated.as_torch program.py` and `sys.modules["torch"] = generated` run a PyTorch program's
imports as they are (Note [Running PyTorch programs as they are] in runtime/as_torch.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

IMPORTS = textwrap.dedent("""
    import sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.optim.lr_scheduler import StepLR
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.dataloader import default_collate
    from torch.nn.modules.loss import _Loss
    from torch import distributions
    import generated
    assert torch is generated and sys.modules["torch"] is generated
    assert nn is generated.nn and F is generated.nn.functional and optim is generated.optim
    assert sys.modules["torch.nn"] is generated.nn and sys.modules["torch.nn.functional"] is generated.nn.functional
    assert issubclass(nn.MSELoss, _Loss) and callable(default_collate) and StepLR and distributions
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    data = DataLoader(TensorDataset(torch.ones(4, 3), torch.zeros(4, 1)), batch_size=2)
    for x, y in data:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("ran", sys.argv[1:])
""")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_program_runs_with_torch_naming_opgen(tmp_path: Path) -> None:
    (tmp_path / "program.py").write_text(IMPORTS)
    proc = _run(["-m", "generated.as_torch", "program.py", "--epochs", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ran ['--epochs', '1']"


def test_a_module_runs_with_dash_m(tmp_path: Path) -> None:
    (tmp_path / "prog_module.py").write_text(IMPORTS)
    proc = _run(["-m", "generated.as_torch", "-m", "prog_module", "x"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ran ['x']"


def test_the_plain_alias_resolves_submodules(tmp_path: Path) -> None:
    (tmp_path / "program.py").write_text('import sys, generated\nsys.modules["torch"] = generated\n' + IMPORTS)
    proc = _run(["program.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_other_names_are_not_answered() -> None:
    """Only a name that sys.modules maps to the package is answered: `notorch.nn` stays unknown."""
    import generated  # noqa: F401
    with pytest.raises(ModuleNotFoundError):
        __import__("notorch_opgen_alias.nn")


def test_install_refuses_to_replace_another_module() -> None:
    from runtime import as_torch
    sys.modules["opgen_test_taken"] = sys
    try:
        with pytest.raises(RuntimeError, match="already imported"):
            as_torch.install("opgen_test_taken")
    finally:
        del sys.modules["opgen_test_taken"]


def test_usage_without_a_program_exits_2(tmp_path: Path) -> None:
    proc = _run(["-m", "generated.as_torch"], tmp_path)
    assert proc.returncode == 2 and "as_torch" in proc.stderr
