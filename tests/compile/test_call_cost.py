"""What the cheap compiled call keeps between calls must never hide a change (Note [The cost of a compiled
call], Note [Guards on Python state], Note [Thread count]): each test changes one thing a plan, a cached
count or a kept buffer stands for, and the very next call must see it."""

from __future__ import annotations

import types

import numpy as np
import pytest

import generated as G
from runtime.compile.guards import StatePlan, python_state

LATE_SCALE_NAME = "LATE_SCALE"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def close(got: G.Tensor, want: G.Tensor) -> None:
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_a_rebound_closure_cell_is_seen_at_the_next_call() -> None:
    k = 2.0
    f = G.compile(lambda t: t * k + 1)
    x = G.randn(16)
    for value in (2.0, 3.0, 2.0, -1.5, 3.0):
        k = value
        close(f(x), x * value + 1)
    assert len(f.graphs) == 3  # each value compiled once


def test_a_function_rebound_in_a_cell_is_followed_with_its_own_state() -> None:
    def scaled(s: float):  # type: ignore[no-untyped-def]
        return lambda t: t * s

    helper = scaled(2.0)
    f = G.compile(lambda t: helper(t) + 1)
    x = G.randn(8)
    close(f(x), x * 2 + 1)
    helper = scaled(5.0)  # another function (another plan), whose cell holds another number
    close(f(x), x * 5 + 1)
    helper = scaled(2.0)
    close(f(x), x * 2 + 1)
    assert len(f.graphs) == 2


def late(t: G.Tensor) -> G.Tensor:
    if LATE_SCALE_NAME in globals():
        return t * LATE_SCALE  # type: ignore[name-defined]  # noqa: F821
    return t + 0


def test_a_global_defined_after_the_plan_was_made_is_read() -> None:
    f = G.compile(late)
    x = G.randn(6)
    try:
        close(f(x), x)
        globals()[LATE_SCALE_NAME] = 3.0  # absent when the plan was made: read from the globals dict each call
        close(f(x), x * 3)
        globals()[LATE_SCALE_NAME] = 4.0
        close(f(x), x * 4)
    finally:
        globals().pop(LATE_SCALE_NAME, None)
    close(f(x), x)


GLOBAL_A = 2.0
GLOBAL_B = 5.0


def reads_a(t: G.Tensor) -> G.Tensor:
    return t * GLOBAL_A


def reads_b(t: G.Tensor) -> G.Tensor:
    return t * GLOBAL_B


def test_a_replaced_code_object_gets_a_new_plan() -> None:
    fn = types.FunctionType(reads_a.__code__, globals())
    plan = StatePlan(fn)
    assert plan.state((), {}) == (2.0,)
    fn.__code__ = reads_b.__code__  # now it reads another global
    assert plan.state((), {}) == (5.0,)
    assert plan.state((), {}) == python_state(fn, (), {})


def model() -> G.nn.Module:
    G.manual_seed(0)
    inner = G.nn.Sequential(G.nn.Linear(6, 6), G.nn.Dropout(0.5))
    return G.nn.Sequential(inner, G.nn.BatchNorm1d(6))


def test_a_nested_submodule_flag_flipped_is_seen_at_the_next_call() -> None:
    m = model()
    c = G.compile(lambda t: m(t) * 1.0)
    x = G.randn(8, 6)
    with G.no_grad():
        m.train()
        c(x)
        m[0][1].eval()  # only the dropout, two levels down
        m[1].eval()
        close(c(x), m(x))  # deterministic now: it ran the eval graph
        close(c(x), m(x))
        m[0][1].train()
        m[1].train()
        c(x)
    assert len(c.graphs) == 2


def test_a_submodule_replaced_or_added_changes_the_state() -> None:
    m = model()
    plan = StatePlan(lambda t: m(t))
    before = plan.state((), {})
    m[0][1] = G.nn.Dropout(0.5).eval()  # replaced by one in another mode
    assert plan.state((), {}) != before
    m[0][1] = G.nn.Dropout(0.5)
    assert plan.state((), {}) == before
    m.append(G.nn.ReLU())  # added
    assert plan.state((), {}) != before
    assert plan.state((), {}) == python_state(lambda t: m(t), (), {})


def test_the_thread_count_follows_set_num_threads_at_the_next_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime import threads
    from runtime.compile import program as program_module
    from runtime.compile import thread_split

    monkeypatch.setattr(threads, "_requested", [None])
    monkeypatch.setattr(threads, "_env_threads", [1])  # as read from OMP_NUM_THREADS=1 at the first kernel
    monkeypatch.setattr(threads, "_limiter", [None])
    monkeypatch.setattr(program_module, "SPLIT_MIN", 0)
    monkeypatch.setattr(thread_split, "SIZES", (0,))
    monkeypatch.setattr(thread_split, "_known", {2: 0, 3: 0})  # the crossovers: every size splits
    counts: list[int] = []
    split = thread_split.split_threads
    monkeypatch.setattr(program_module, "split_threads", lambda work: counts.append(split(work)) or counts[-1])
    f = G.compile(lambda t: G.tanh(t * 2) + t)
    x = G.randn(64, 64)
    with G.no_grad():
        close(f(x), G.tanh(x * 2) + x)
        assert counts[-1] == 1
        try:
            G.set_num_threads(3)
            close(f(x), G.tanh(x * 2) + x)
            assert counts[-1] == 3
            G.set_num_threads(2)
            f(x)
            assert counts[-1] == 2
        finally:
            if threads._limiter[0] is not None:
                threads._limiter[0].restore_original_limits()


def test_a_kept_input_buffer_address_is_used_only_for_that_very_array() -> None:
    """A kernel's input with an arena slot passes the address taken when the buffer was made only when the
    array it is given is that buffer (after a group that ran its operators, it is a new array)."""
    from runtime.compile import pyrun
    from runtime.compile.fused_update import address

    c = G.compile(lambda x, b: G.sigmoid(x * 2 + b) * x)
    x, b = G.randn(4, 3), G.randn(3)
    with G.no_grad():
        want = c(x, b).numpy()
    (program,) = c.programs
    (group,) = program.fused
    fn = program._calls[id(group)]
    ids = [v.id for v in program.graph.inputs]
    arrays = {ids[0]: x.numpy().copy(), ids[1]: b.numpy().copy()}
    given = [arrays[v.id] for v in group.inputs]
    runner = pyrun.group_runner(group, fn, None, [None] * len(group.outputs),
                                [0 if v.id == ids[0] else None for v in group.inputs])
    decoy = np.zeros_like(arrays[ids[0]])
    (out,) = runner([(decoy, address(decoy))], *given)  # the slot holds another array: not its address
    np.testing.assert_allclose(out, want, rtol=1e-6)
    kept = arrays[ids[0]]
    (out,) = runner([(kept, address(kept))], *given)  # the very array: its kept address
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_a_compiled_call_keys_tensor_arguments_like_their_signature() -> None:
    from runtime.compile import _flat_tensors, _key

    x, w = G.randn(3, 4), G.randn(4).requires_grad_()
    args = (x, [w, 2.0], "mode")
    kwargs = {"scale": 1.5, "t": x}
    key, tensors = _key(args, kwargs)
    flat = _flat_tensors((args, kwargs))
    assert len(tensors) == len(flat) == 3 and all(a is b for a, b in zip(tensors, flat, strict=True))
    assert _key(args, kwargs)[0] == key
    assert _key((x.t().contiguous().t(), [w, 2.0], "mode"), kwargs)[0] != key  # other strides
    assert _key((x, [w.detach(), 2.0], "mode"), kwargs)[0] != key  # requires_grad
    assert _key((x, [w, 3.0], "mode"), kwargs)[0] != key
    assert _key(args, {"scale": 1.5, "t": x.double()})[0] != key
    with G.no_grad():
        assert _key(args, kwargs)[0] != key  # grad mode


# -- the compiled training forward's autograd node (Note [The compiled graph's node]) ----------------------
def test_a_gradient_that_is_an_array_the_backward_read_is_copied_into_grad() -> None:
    c = G.randn(5, 3)
    f = G.compile(lambda x, w: (x * w).sum() + (x * c).sum())
    x, w = G.randn(5, 3).requires_grad_(), G.randn(5, 3).requires_grad_()
    for _ in range(3):  # capture, then compiled runs
        x.grad = w.grad = None
        f(x, w).backward()
        np.testing.assert_allclose(x.grad.numpy(), (w + c).detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy(), rtol=1e-6)
        before_x, before_c = x.detach().numpy().copy(), c.numpy().copy()
        with G.no_grad():
            w.grad.add_(1.0)  # the leaf's .grad is its own: the saved input and the constant are unchanged
            x.grad.add_(1.0)
        np.testing.assert_array_equal(x.detach().numpy(), before_x)
        np.testing.assert_array_equal(c.numpy(), before_c)
    assert len(f.programs) == 1


def test_fresh_gradients_are_stored_without_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime.autograd import engine

    G.manual_seed(0)
    ps = [G.randn(8, 4).requires_grad_(), G.zeros(8).requires_grad_()]
    f = G.compile(lambda x: G.tanh(G.nn.functional.linear(x, ps[0], ps[1])).sum())
    x = G.randn(6, 4)
    f(x).backward()
    copies: list[int] = []
    real = engine._accumulate
    monkeypatch.setattr(engine, "_accumulate", lambda *a: copies.append(1) or real(*a))
    for p in ps:
        p.grad = None
    loss = f(x)
    loss.backward()
    assert len(copies) < len(ps), "a gradient the compiled backward made is kept as .grad without a copy"
    xs = [p.detach().requires_grad_() for p in ps]  # eager gradients, for the values
    G.tanh(G.nn.functional.linear(x, xs[0], xs[1])).sum().backward()
    for p, q in zip(ps, xs, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_gradients_that_are_arrays_the_backward_read_are_not_fresh() -> None:
    from runtime.compile.training import _fresh
    from runtime.tensor import Tensor

    saved = G.randn(4, 3)
    view = saved[1:]  # a saved view: its base array is read too
    incoming = G.randn(4, 3)
    new = G.randn(4, 3)
    held = [saved, incoming, None]
    assert _fresh([new, None], held)
    assert not _fresh([new, Tensor._wrap(saved._data, saved.dtype)], held)  # the very array, another Tensor
    assert not _fresh([Tensor._wrap(incoming._data, incoming.dtype)], held)
    assert not _fresh([Tensor._wrap(view._data.base, saved.dtype)], [view])


@pytest.mark.parametrize("how", ["read-only", "empty"])
def test_a_group_call_hands_arrays_without_a_buffer_address_to_the_general_runner(how: str) -> None:
    f = G.compile(lambda t: G.sigmoid(t * 2 + 1) * t)
    a = np.random.default_rng(0).standard_normal((5, 3) if how == "read-only" else (0, 3)).astype(np.float32)
    if how == "read-only":
        a.setflags(write=False)
    x = G.from_numpy(a)
    with G.no_grad():
        for _ in range(2):
            close(f(x), G.sigmoid(x * 2 + 1) * x)
    assert len(f.programs) == 1
    if how == "read-only":
        assert f.programs[0].fused  # (an empty input's graph fuses nothing: its results are checked only)
