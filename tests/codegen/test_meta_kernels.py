"""Every operator has a Meta kernel (Note [Meta tensors] in runtime/meta_array.py): generated from its
`pointwise:` spec, written by hand and named with `Meta:` in native_functions.yaml, or reached through a
CompositeImplicitAutograd decomposition into ops that have one. A CompositeExplicitAutograd kernel does not
count: it computes on its inputs' arrays, which a meta tensor does not have. The check lists every operator
left without one; ops whose output shape depends on values have a Meta kernel that refuses them (listed
here with the reason, and checked to raise `DataDependentOutputError`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen.cli import main
from codegen.loading import load_model
from codegen.render import registrations as R
from runtime.vocabulary import DispatchKey, resolve

ROOT = Path(__file__).resolve().parents[2]
MODEL = load_model(ROOT)

# Operators whose Meta kernel raises DataDependentOutputError: the output's shape is a function of values.
DATA_DEPENDENT = {
    "nonzero": "one row per non-zero element",
    "_unique2": "one element per distinct value",
    "bincount": "as long as the largest value plus one",
}


def meta_kernel(f) -> tuple[str, str] | None:
    """(how, kernel) serving the Meta key of `f`: 'generated', 'hand-written' or 'composite'; None: none."""
    registered = dict(R.registrations(f))
    name, _ = resolve(DispatchKey.Meta, registered)
    if name == "Meta":
        kernel = registered["Meta"]
        return ("generated" if kernel.startswith("_meta.") else "hand-written"), R.kernel_path(kernel)
    if name == "CompositeImplicitAutograd":
        return "composite", registered[name]
    return None


def test_every_op_has_a_meta_kernel() -> None:
    missing = [f"{f.name} ({f.loc}): Meta served by {resolve(DispatchKey.Meta, dict(R.registrations(f)))[0]}"
               for f in MODEL.functions if meta_kernel(f) is None]
    assert not missing, "operators without a Meta kernel:\n" + "\n".join(missing)


def test_every_pointwise_op_has_a_generated_meta_kernel() -> None:
    for f in MODEL.functions:
        if f.pointwise is not None:
            assert meta_kernel(f) == ("generated", meta_kernel(f)[1]), f.name
            assert meta_kernel(f)[1].startswith("generated._meta_kernels."), f.name


def test_hand_written_meta_kernels_live_in_meta_modules() -> None:
    """A hand-written Meta kernel is a function of a runtime/kernels/meta_*.py module, except the few
    kernels that compute nothing on any device (factories by BackendSelect, views, composites of ops)."""
    allowed_elsewhere = {"runtime.factories.empty_strided_meta", "runtime.kernels.sampling.normal_float_float",
                         "runtime.kernels.tensor_extras.angle"}
    for f in MODEL.functions:
        found = meta_kernel(f)
        if found and found[0] == "hand-written":
            module = found[1].rpartition(".")[0]
            assert (module.startswith("runtime.kernels.meta_") or module == "runtime.kernels.views"
                    or found[1] in allowed_elsewhere), f"{f.name}: {found[1]}"


def test_data_dependent_ops_refuse_meta_tensors() -> None:
    pytest.importorskip("numpy")
    import generated as G
    from runtime.kernels.meta_shape import DataDependentOutputError

    x = G.empty(4, dtype=G.int64, device="meta")
    calls = {"nonzero": lambda: G.nonzero(x), "_unique2": lambda: G.unique(x), "bincount": lambda: G.bincount(x)}
    assert set(calls) == set(DATA_DEPENDENT)
    for name, call in calls.items():
        with pytest.raises(DataDependentOutputError, match=name.strip("_").removesuffix("2")):
            call()


def test_show_prints_the_meta_row() -> None:
    out = CliRunner().invoke(main, ["show", "--root", str(ROOT), "add.Tensor"]).output
    assert "Meta           generated._meta_kernels.add_Tensor  [kernel]" in out
    out = CliRunner().invoke(main, ["show", "--root", str(ROOT), "sum"]).output
    assert "Meta           runtime.kernels.meta_reduce.sum  [kernel]" in out
    out = CliRunner().invoke(main, ["show", "--root", str(ROOT), "--all", "mul"]).output
    assert "Meta           -" not in out


def test_show_has_no_meta_missing_row() -> None:
    """`opgen show --all` of every operator names a kernel for the Meta key: the table it prints
    (`static_table`, the dispatcher's own resolution) has no '-' in the Meta row."""
    from codegen.cli import static_table

    missing = [f.name for f in MODEL.functions
               if any(key == "Meta" and kernel == "-" for key, kernel, _ in static_table(f, MODEL))]
    assert not missing, f"`opgen show` prints no Meta kernel for: {', '.join(missing)}"
    out = CliRunner().invoke(main, ["show", "--root", str(ROOT), "--all", "index_put_"]).output
    assert "Meta           runtime.kernels.meta_shape.index_put_  [kernel]" in out
