"""A differentiable op without a derivatives.yaml entry is a generate-time error that names the entry to add
(Note [A differentiable op needs a derivative], codegen/differentiable.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codegen import differentiable, gen
from codegen.derivatives import load_derivatives
from codegen.errors import LoadError
from codegen.loading import load_model
from codegen.native import load_native_functions

ROOT = Path(__file__).resolve().parents[2]
NF = "native_functions.yaml"
DY = "derivatives.yaml"


def problems(native: str, derivatives: str = "") -> list[str]:
    fs = load_native_functions(ROOT / NF, root=ROOT, text=textwrap.dedent(native), file=NF)
    ds = load_derivatives(ROOT / DY, fs, root=ROOT, text=textwrap.dedent(derivatives), file=DY)
    return [str(d) for d in differentiable.problems(fs, ds, DY)]


def test_a_floating_op_without_a_derivative_is_an_error_naming_what_to_add() -> None:
    (found,) = problems("""\
        - func: twice(Tensor self) -> Tensor
          pointwise: self

        - func: mine(Tensor self, Tensor other, int k) -> (Tensor a, Tensor b)
          dispatch:
            CPU: runtime.kernels.linalg.mm
        """, """\
        - name: twice(Tensor self) -> Tensor
          self: grad * 2
        """)
    assert found.startswith(f"{NF}:4: 'mine' is differentiable")
    assert "add a derivatives.yaml entry or mark it `output_differentiability: [False, False]`" in found
    assert "- name: mine(Tensor self, Tensor other, int k) -> (Tensor a, Tensor b)" in found
    assert "self: <" in found and "other: <" in found and "k: <" not in found


def test_ops_whose_outputs_are_never_floating_need_no_entry() -> None:
    assert problems("""\
        - func: is_big(Tensor self) -> Tensor
          pointwise: self > 2
          promote: bool

        - func: flip_bits(Tensor self) -> Tensor
          pointwise: ~self
          dtypes: integral

        - func: count(Tensor self) -> int
          dispatch:
            CPU: runtime.kernels.linalg.mm

        - func: make(int[] size) -> Tensor
          dispatch:
            CPU: runtime.kernels.linalg.mm

        - func: composite(Tensor self) -> Tensor
          dispatch:
            CompositeImplicitAutograd: runtime.kernels.linalg.mm
        """) == []


def test_marking_outputs_not_differentiable_or_writing_a_formula_satisfies_it() -> None:
    native = """\
        - func: pick(Tensor self) -> Tensor
          dispatch:
            CPU: runtime.kernels.linalg.mm

        - func: fill_random_(Tensor(a!) self) -> Tensor(a!)
          dispatch:
            CPU: runtime.kernels.linalg.mm
        """
    assert len(problems(native)) == 2
    assert problems(native, """\
        - name: pick(Tensor self) -> Tensor
          output_differentiability: [False]

        - name: fill_random_(Tensor(a!) self) -> Tensor(a!)
          self: zeros_like_grad(grad)
        """) == []


def test_the_repository_ops_all_say_how_they_differentiate() -> None:
    model = load_model(ROOT)
    assert differentiable.problems(model.functions, model.derivatives, DY) == []
    # the rule is not vacuous: most of the project's ops need an entry
    assert sum(differentiable.needs_derivative(f) for f in model.functions) > 100


def test_generate_stops_with_the_error(tmp_path: Path) -> None:
    (tmp_path / NF).write_text((ROOT / NF).read_text() + "\n- func: logit2(Tensor self) -> Tensor\n"
                               "  pointwise: self / (1 - self)\n")
    for name in ("templates", "runtime", DY):
        (tmp_path / name).symlink_to(ROOT / name)
    with pytest.raises(LoadError) as info:
        gen.render_all(tmp_path)
    (diag,) = info.value.diagnostics
    assert diag.location.file == NF and "'logit2'" in diag.message and "output_differentiability" in diag.message


def test_random_fills_have_a_zero_gradient_and_index_ops_none() -> None:
    import generated as G

    for fill in (lambda y: y.uniform_(), lambda y: y.normal_(), lambda y: y.random_(0, 5)):
        x = G.ones(4, requires_grad=True)
        y = x * 2
        fill(y)
        assert y.requires_grad
        y.sum().backward()
        assert x.grad.tolist() == [0.0] * 4
    x = G.tensor([1.0, 3.0, 2.0], requires_grad=True)
    for out in (G.argmax(x), G.nonzero(x), x.new_zeros(2), G.count_nonzero(x), G.one_hot(G.tensor([0, 1]))):
        assert not out.requires_grad
    values = G._unique2(x, True, True, True)[0]
    assert values.requires_grad  # as PyTorch: recorded, its backward not implemented
    with pytest.raises(NotImplementedError):
        values.sum().backward()


def test_random_fill_gradient_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()
    y.sum().backward()
    assert x.grad.tolist() == [0.0] * 3


def test_as_strided_double_backward_matches_torch_on_overlapping_views() -> None:
    torch = pytest.importorskip("torch")
    import generated as G

    def second(lib, x, w):  # d/dx of <w, d/dx sum(as_strided(x)**3)>: needs as_strided_backward's derivative
        y = lib.as_strided(x, (3, 2), (1, 1), 1)   # overlapping: element (i, j) at 1 + i + j
        (g,) = lib.autograd.grad((y * y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * w).sum(), x)
        return gg

    data = [0.5, -1.0, 2.0, 1.5, -0.25, 0.75]
    weights = [1.0, 2.0, -1.0, 0.5, 3.0, -2.0]
    ours = second(G, G.tensor(data, dtype=G.float64, requires_grad=True), G.tensor(weights, dtype=G.float64))
    theirs = second(torch, torch.tensor(data, dtype=torch.float64, requires_grad=True),
                    torch.tensor(weights, dtype=torch.float64))
    assert ours.tolist() == pytest.approx(theirs.tolist())


def test_cli_says_marked_ops_are_not_differentiable() -> None:
    from click.testing import CliRunner

    from codegen.cli import main

    listed = CliRunner().invoke(main, ["list", "--root", str(ROOT), "argmax"])
    assert listed.exit_code == 0 and listed.output.split("\n")[1].split()[-1] == "no", listed.output
    shown = CliRunner().invoke(main, ["show", "--root", str(ROOT), "argmax"])
    assert "not differentiable" in shown.output and "ArgmaxBackward" not in shown.output
