"""A compiled program as one generated Python function (Note [The program as one function]).

Note [The program as one function]
Walking the steps at every call (a dict of values, a closure per node, a Tensor per result) costs more than
many of the steps themselves on small graphs, so a Program's steps are written out once, when it is made, as
the source of one Python function: every value is a local variable, held as the array that lowered nodes and
fused kernels read (Note [Lowered nodes]) and wrapped into a Tensor only where an operator call or the result
needs one; operator calls are made with their constant arguments in place; a fused CPU group is one call of
its C++ function on the arrays' addresses and the thread count, and a nonzero return (an index out of range)
runs the group's nodes through their operators, which raise the error. That call goes through a small function
written for the group (its arity, input layouts, output shapes and arena slots spelled out: no loops or lists
per call), which hands any input not exactly as at capture, or an array whose address `from_buffer` cannot
take (read-only, empty), to the general runner that decides as described here. A fused group's input of
another layout than at capture (the guards do not cover the strides of every intermediate value; strides of
dims of size 1 do not count) runs the group's nodes through their operators instead. A fused CUDA group
(cuda_fusion.py) is a call on the tensors, which launches its kernels. After an operator that writes into its
arguments, the arrays of those arguments are read again from their tensors. The function is compiled by
`compile()` and kept on the Program; `debug=True` prints its source beside the graph's.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.compile.fused_update import address
from runtime.compile.fusion import FusedGroup
from runtime.compile.graph import Node, Value, leaves, same_kind
from runtime.compile.lowering import VIEWS, lower
from runtime.compile.passes import mutates
from runtime.tensor import Tensor


def group_runner(group: FusedGroup, call: Any, threads: Callable[[], int] | None,
                 slots: list[int | None] | None = None, input_slots: list[int | None] | None = None) -> Any:
    """A function of the program's arena and a CPU group's input arrays returning its output arrays (Note
    [Fused pointwise kernels]: the kernel returns nonzero for an index out of range and takes the thread
    count last; `threads` gives it where the group is split over threads (Note [Threads of fused kernels]),
    else it runs on one). An output with a slot (Note [Buffers a program keeps]) is written into the
    arena's array at that slot, made on the first run; the others into new arrays. An arena entry is the
    array and its address, so a kept buffer's address is taken once: for an output, and for an input with
    a slot (`input_slots`) that is that very array (a group that ran its operators instead made a new one)."""
    layouts = [(v.shape, tuple(s * np.dtype(v.dtype.np).itemsize for s in v.strides), np.dtype(v.dtype.np))
               for v in group.inputs]
    outs = [(v.shape, np.dtype(v.dtype.np)) for v in group.outputs]
    kept = slots if slots is not None and any(k is not None for k in slots) else None
    ins = input_slots if input_slots is not None and any(k is not None for k in input_slots) else None
    # an input read from its arena buffer has the layout that buffer was made with (contiguous): where
    # that is the layout this kernel was written for, it needs no check
    trusted = [k is not None and layouts[i][1] == np.empty(layouts[i][0], dtype=layouts[i][2]).strides
               for i, k in enumerate(ins)] if ins is not None else []
    empty = np.empty

    def run(arena: list[Any], *arrays: np.ndarray) -> list[np.ndarray]:
        if ins is None:
            for a, (shape, strides, dt) in zip(arrays, layouts, strict=True):
                if a.shape != shape or a.dtype != dt or a.strides != strides:
                    if not _same_layout(group, arrays):  # another layout than at capture: the operators
                        return _eager_group(group, arrays)
                    break
            addresses = [address(a) for a in arrays]
        else:
            addresses = []
            checked = False
            for a, (shape, strides, dt), k, trust in zip(arrays, layouts, ins, trusted, strict=True):
                if k is not None:
                    entry = arena[k]
                    if entry is not None and entry[0] is a:
                        addresses.append(entry[1])
                        if trust:
                            continue
                    else:
                        addresses.append(address(a))
                else:
                    addresses.append(address(a))
                if not checked and (a.shape != shape or a.dtype != dt or a.strides != strides):
                    if not _same_layout(group, arrays):  # another layout than at capture: the operators
                        return _eager_group(group, arrays)
                    checked = True
        if kept is None:
            results = [empty(shape, dtype=dt) for shape, dt in outs]
            addresses += [address(o) for o in results]
        else:
            results = []
            for (shape, dt), k in zip(outs, kept, strict=True):
                if k is None:
                    buf = empty(shape, dtype=dt)
                    results.append(buf)
                    addresses.append(address(buf))
                else:
                    entry = arena[k]
                    if entry is None:
                        buf = empty(shape, dtype=dt)
                        entry = arena[k] = (buf, address(buf))
                    results.append(entry[0])
                    addresses.append(entry[1])
        if call(*addresses, threads() if threads else 1):
            return _eager_group(group, arrays)  # an index out of range: the operators raise their error
        return results
    return _specialised(group, call, threads, layouts, outs, kept, ins, trusted, run)


def _specialised(group: FusedGroup, call: Any, threads: Any, layouts: list[Any], outs: list[Any],
                 kept: list[int | None] | None, ins: list[int | None] | None, trusted: list[bool], general: Any) -> Any:
    """`general` (group_runner's run) written out for this group's arity, layouts and slots (Note [The
    program as one function]): no loops, no lists of addresses, addresses taken inline. Any input not
    exactly as at capture (shape, byte strides, dtype), and any array whose address from_buffer cannot take
    (read-only, empty), goes to `general`, which decides as before."""
    ns: dict[str, Any] = {"general": general, "call": call, "threads": threads, "empty": np.empty,
                          "at": ctypes.c_char.from_buffer, "addressof": ctypes.addressof, "group": group,
                          "eager_group": _eager_group}
    names = [f"a{i}" for i in range(len(layouts))]
    params = "".join(f"{n}, " for n in names)
    lines = [f"def run(arena, {params}):", "    try:"]
    for i, (n, (shape, strides, dt)) in enumerate(zip(names, layouts, strict=True)):
        ns[f"S{i}"], ns[f"R{i}"], ns[f"D{i}"] = shape, strides, dt
        check = f"{n}.shape != S{i} or {n}.strides != R{i} or ({n}.dtype is not D{i} and {n}.dtype != D{i})"
        k = ins[i] if ins is not None else None
        if k is not None:
            lines += [f"        e = arena[{k}]",
                      f"        if e is not None and e[0] is {n}:",
                      f"            p{i} = e[1]"]
            if not trusted[i]:
                lines += [f"            if {check}:", f"                return general(arena, {params})"]
            lines += ["        else:",
                      f"            if {check}:", f"                return general(arena, {params})",
                      f"            p{i} = addressof(at({n}))"]
        else:
            lines += [f"        if {check}:", f"            return general(arena, {params})",
                      f"        p{i} = addressof(at({n}))"]
    for j, (shape, dt) in enumerate(outs):
        ns[f"OS{j}"], ns[f"OD{j}"] = shape, dt
        k = kept[j] if kept is not None else None
        if k is None:
            lines += [f"        o{j} = empty(OS{j}, dtype=OD{j})", f"        q{j} = addressof(at(o{j}))"]
        else:
            lines += [f"        e = arena[{k}]",
                      "        if e is None:",
                      f"            b = empty(OS{j}, dtype=OD{j})",
                      f"            e = arena[{k}] = (b, addressof(at(b)))",
                      f"        o{j}, q{j} = e"]
    lines += ["    except (TypeError, ValueError):  # a read-only or empty array: the general runner",
              f"        return general(arena, {params})"]
    args = "".join(f"p{i}, " for i in range(len(layouts))) + "".join(f"q{j}, " for j in range(len(outs)))
    lines += [f"    if call({args}{'threads()' if threads else '1'}):",
              f"        return eager_group(group, ({params}))  # an index out of range: the operators raise",
              "    return [" + "".join(f"o{j}, " for j in range(len(outs))) + "]"]
    exec(compile("\n".join(lines) + "\n", "<G.compile group call>", "exec"), ns)
    return ns["run"]


def private_values(steps: list[Node | FusedGroup], output: Any) -> list[Value]:
    """The values that CPU fused groups make and that never leave the program (Note [Buffers a program
    keeps]): not returned, read only by fused groups and by lowered nodes that make new arrays, or by
    lowered views whose own values are private in the same sense."""
    returned = {v.id for v in _values(output)}
    base: dict[int, int] = {}  # a lowered view's value -> the value it views
    escapes = set(returned)
    for step in steps:
        if isinstance(step, FusedGroup):
            continue
        if _lowered(step, returned) is not None:
            if step.name in VIEWS:
                for v in step.inputs():
                    base[step.outputs[0].id] = v.id
            continue
        escapes.update(v.id for v in step.inputs())  # an operator call may keep or alias its arguments
    stack = list(escapes)
    while stack:
        i = base.get(stack.pop())
        if i is not None and i not in escapes:
            escapes.add(i)
            stack.append(i)
    return [v for s in steps if isinstance(s, FusedGroup) for v in s.outputs
            if v.id not in escapes and v.external is None]


def _lowered(node: Node, returned: set[int]) -> Any:
    """The node's lowering as the written program runs it (None: its operator is called)."""
    if not LOWER or (node.name in VIEWS and node.outputs[0].id in returned):
        return None
    return lower(node)


def _same_layout(group: FusedGroup, arrays: tuple[np.ndarray, ...]) -> bool:
    """The arrays have the shapes and dtypes the kernel was written for, and its strides where they matter
    (dims of size 1 are never stepped)."""
    for a, v in zip(arrays, group.inputs, strict=True):
        if a.shape != v.shape or a.dtype != np.dtype(v.dtype.np):
            return False
        size = a.dtype.itemsize
        if any(st != s * size for st, s, n in zip(a.strides, v.strides, v.shape, strict=True) if n != 1):
            return False
    return True


def cuda_group_runner(group: FusedGroup, cuda: Any) -> Any:
    """A function of a CUDA group's input tensors returning its output tensors (cuda_fusion.CudaKernels;
    the operators where its kernels refuse the inputs)."""
    outs = [v.id for v in cuda_outputs(group)]

    def run(*tensors: Tensor) -> list[Tensor]:
        env: dict[int, Any] = {}
        if not cuda.run(group, list(tensors), env):
            env = {v.id: t for v, t in zip(group.inputs, tensors, strict=True)}
            for node in group.nodes:
                _call(node, env)
        return [env[i] for i in outs]
    return run


def cuda_outputs(group: FusedGroup) -> list[Value]:
    """The values a CUDA group stores: its values read later (cuda_render.py)."""
    return list(group.outputs)


def _call(node: Node, env: dict[int, Any]) -> None:
    result = node.op.call(*_resolve(node.args, env))
    outs = [result] if node.result_kind == "tensor" else list(result)
    for v, t in zip(node.outputs, outs, strict=True):
        env[v.id] = t


def _eager_group(group: FusedGroup, arrays: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    env: dict[int, Any] = {v.id: Tensor._wrap(a, v.dtype) for v, a in zip(group.inputs, arrays, strict=True)}
    for node in group.nodes:
        _call(node, env)
    return [env[v.id]._data for v in group.outputs]


def _resolve(x: Any, env: dict[int, Any]) -> Any:
    if isinstance(x, Value):
        return x.external if x.external is not None else env[x.id]
    if isinstance(x, list | tuple):
        return same_kind(x, [_resolve(a, env) for a in x])
    if isinstance(x, dict):
        return {k: _resolve(v, env) for k, v in x.items()}
    return x


LOWER = True  # Note [Lowered nodes]; off only to measure what lowering gains


class _Writer:
    def __init__(self, inputs: list[Value], returned: set[int]) -> None:
        self.returned = returned  # ids of the values the program returns
        self.arena = False  # the program keeps buffers (Note [Buffers a program keeps])
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {"wrap": Tensor._wrap}
        self.tensor: dict[int, str] = {}  # value id -> the local (or namespace name) holding its Tensor
        self.array: dict[int, str] = {}  # value id -> the local holding its array
        for v in inputs:
            self.tensor[v.id] = f"t{v.id}"

    def const(self, x: Any, prefix: str = "k") -> str:
        name = f"{prefix}{len(self.ns)}"
        self.ns[name] = x
        return name

    def tensor_of(self, v: Value) -> str:
        if v.external is not None:
            name = self.tensor.get(v.id)
            if name is None:
                name = self.tensor[v.id] = self.const(v.external, "e")
            return name
        name = self.tensor.get(v.id)
        if name is None:
            name = self.tensor[v.id] = f"t{v.id}"
            self.lines.append(f"t{v.id} = wrap(a{v.id}, {self.const(v.dtype, 'd')})")
        return name

    def array_of(self, v: Value) -> str:
        if v.external is not None:
            return f"{self.tensor_of(v)}._data"
        name = self.array.get(v.id)
        if name is None:
            name = self.array[v.id] = f"a{v.id}"
            self.lines.append(f"a{v.id} = {self.tensor[v.id]}._data")
        return name

    def expr(self, x: Any, as_array: bool) -> str:
        if isinstance(x, Value):
            return self.array_of(x) if as_array else self.tensor_of(x)
        if isinstance(x, list):
            return "[" + "".join(self.expr(a, as_array) + ", " for a in x) + "]"
        if isinstance(x, tuple):
            items = "".join(self.expr(a, as_array) + ", " for a in x)
            return f"{self.const(type(x))}({items})" if hasattr(x, "_fields") else f"({items})"  # (a named tuple)
        if isinstance(x, dict):
            return "{" + "".join(f"{self.const(k)}: {self.expr(a, as_array)}, " for k, a in x.items()) + "}"
        if x is None or isinstance(x, bool | int | str) or (isinstance(x, float) and x == x and abs(x) != float("inf")):
            return repr(x)
        return self.const(x)

    def node(self, node: Node) -> None:
        fn = _lowered(node, self.returned)
        if fn is not None:
            out = node.outputs[0]
            args = "[" + "".join(self.expr(a, True) + ", " for a in node.args) + "]"
            self.lines.append(f"a{out.id} = {self.const(fn, 'f')}({args})")
            self.array[out.id] = f"a{out.id}"
            self.tensor.pop(out.id, None)
            return
        call = self.const(node.op.call, "op")
        args = "".join(self.expr(a, False) + ", " for a in node.args)
        outs = node.outputs
        if node.result_kind == "tensor":
            self.lines.append(f"t{outs[0].id} = {call}({args})")
        elif outs:
            names = "".join(f"t{v.id}, " for v in outs)
            self.lines.append(f"{names}= {call}({args})")
        else:
            self.lines.append(f"{call}({args})")
        for v in outs:
            self.tensor[v.id] = f"t{v.id}"
            self.array.pop(v.id, None)
        if mutates(node):  # its arguments' arrays are read again from their tensors
            for v in node.inputs():
                if v.external is None and v.id in self.array and v.id in self.tensor:
                    del self.array[v.id]

    def group(self, group: FusedGroup, runner: Any, on_arrays: bool) -> None:
        """A group's call: `runner` takes and returns arrays (CPU kernels) or tensors (CUDA kernels)."""
        name = self.const(runner, "g")
        outs = [v.id for v in (group.outputs if on_arrays else cuda_outputs(group))]
        if on_arrays:
            args = ("arena, " if self.arena else "None, ") + "".join(self.array_of(v) + ", " for v in group.inputs)
        else:
            args = "".join(self.tensor_of(v) + ", " for v in group.inputs)
        prefix = "a" if on_arrays else "t"
        names = "".join(f"{prefix}{i}, " for i in outs)
        self.lines.append(f"{names}= {name}({args})" if outs else f"{name}({args})")
        for i in outs:
            if on_arrays:
                self.array[i] = f"a{i}"
                self.tensor.pop(i, None)
            else:
                self.tensor[i] = f"t{i}"
                self.array.pop(i, None)


def _values(x: Any) -> list[Value]:
    return leaves(x, Value)


def make_runner(steps: list[Node | FusedGroup], inputs: list[Value], output: Any,
                runners: dict[int, tuple[Any, bool]], slots: int = 0) -> tuple[Any, str]:
    """The function `run(inputs) -> output` of Note [The program as one function], and its source;
    `runners` maps each group to its runner and whether that takes arrays (group_runner, with the arena of
    `slots` kept buffers first: Note [Buffers a program keeps]) or tensors (cuda_group_runner)."""
    w = _Writer(inputs, {v.id for v in _values(output)})
    w.arena = slots > 0
    pool: list[list[Any]] = []
    w.ns["pool"] = pool
    for step in steps:
        if isinstance(step, FusedGroup):
            w.group(step, *runners[id(step)])
        else:
            w.node(step)
    result = w.expr(output, False)
    params = "".join(f"t{v.id}, " for v in inputs)
    body = [f"({params}) = inputs"] if inputs else []
    # an arena is in use by one run at a time: a run (another thread's, a nested one) that finds none free
    # makes its own, and each is put back when its run ends
    if slots:
        def take() -> list[Any]:
            try:
                return pool.pop()  # atomic: two runs never get one arena
            except IndexError:
                return [None] * slots
        w.ns["take"] = take
        body += ["arena = take()"]
        body += w.lines + [f"result = {result}", "pool.append(arena)", "return result"]
    else:
        body += w.lines + [f"return {result}"]
    source = "def run(inputs):\n" + "".join(f"    {line}\n" for line in body)
    code = compile(source, "<G.compile program>", "exec")
    exec(code, w.ns)
    return w.ns["run"], source
