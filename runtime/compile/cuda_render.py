"""The CUDA C++ of one fused group of fusion.py (Note [Fused kernels on a CUDA device]): kernel_terms.py's terms
rendered as CUDA kernels, their shapes and strides passed at launch (cuda_fusion.py launches them).

Note [Fused kernels on a CUDA device]
A CUDA graph is grouped by fusion.py as a CPU graph is (its nodes on the device; kernel_terms.py also takes
float16 and bfloat16 there; fusion.py forms no max or min scatter there). A group renders as
 - a `flat` kernel when it has no reduction: a grid-stride loop over the domain's elements, each array read
   at its offset from `opgen::Strided` (its strides over the domain; broadcast dims 0), in a `contig`
   version (every array dense and of the domain's shape: element i at i) and a `strided` one;
 - a `rows` kernel when it has (row dims D, Note [Fused kernels with reductions]): one block per index o of
   the kept dims K (a grid-stride loop over them), two `opgen::Strided` per launch, one over K and one over
   D, so that an array's offset is `ob[k] + ib[k]` (K part once per row, D part per element). The phases
   are the CPU kernel's: row terms (every thread computes them; thread 0 stores them), then one pass of the
   block's threads over D computing the element terms (recomputed from the inputs in every pass), storing
   element values and accumulating the phase's reductions per thread, combined by `opgen::block_all` (warp
   shuffles, then shared memory across warps: opgen_reduce.cuh) so every thread holds the row's value for
   the next phase (softmax: the max, the sum of exponentials, then the quotients);
 - and a `finish` kernel when the group has `total` values (the batch mean of a cross entropy) or stored
   `scatter` sums (a layer norm's weight gradient beside its input gradient): the rows kernel adds them
   into zeroed scratch arrays with atomicAdd, the finish kernel divides and casts them into the outputs and
   computes the terms on totals.
Every term computes in the compute type of its dtype (opgen::OpMath: float for the half types) and its
value is rounded to its dtype, as eager execution rounds every op's result; reductions accumulate in the
compute type, as PyTorch's CUDA reductions do (float for float32 and the half types); max and min keep NaN.
A gathered index (a cross entropy's target) out of range sets an error word; the launcher then runs the
group's nodes through their operators, which raise the eager error. The source holds no shape or stride
but the constant divisors of means (shape-dependent) and depends on the ops, dtypes and stored values only,
so a group's kernels serve every layout of its inputs. Index width 32 or 64 as in a per-op launch.
A window term (slice_backward's gradient placed in its slice) reads its input at offsets with the window's
dim left out, plus the window index times the input's stride there (a launch argument), the coordinate along
the dim coming from an operand of stride 1 on it. A group with a max or min `scatter` (no atomic for it here)
raises Unsupported: its nodes run through the operators.

Note [Split rows]
A block per row leaves most of a GPU idle when there are few long rows (a sum or mean of everything, a sum
over the batch of a tall matrix). A group of one phase whose reductions are all sums that no term of it
reads (sums and means of expressions, bias gradients; not a softmax, which needs the row's max before its
exponentials) is `split`: its row sums are accumulated like scatters (per block, then one atomicAdd per
row and block into a scratch array that the finish kernel divides), so the launcher may give each row
`splits` blocks, block (o, part) taking the row's elements part * blockDim + t, stepping splits * blockDim.
Other rows kernels are launched with splits = 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.compile.fusion import FusedGroup, contiguous, strides_on
from runtime.compile.graph import Value
from runtime.compile.kernel_terms import COMPUTE_CTYPE, CTYPE, Term, element_reads

STORAGE = {**CTYPE, "float16": "opgen::half", "bfloat16": "opgen::bfloat16"}  # the C type that stores a dtype
INDEX_TYPES = {32: "unsigned int", 64: "unsigned long long"}
REDUCERS = {"sum": "opgen::SumOp", "max": "opgen::AmaxOp", "min": "opgen::AminOp"}
HEADER = ['#include "opgen_reduce.cuh"', "#ifndef INFINITY", "#define INFINITY __int_as_float(0x7f800000)",
          "#endif", "#ifndef NAN", "#define NAN __int_as_float(0x7fffffff)", "#endif"]


class Unsupported(Exception):
    """A group the CUDA renderer does not render (its nodes run through their operators)."""


@dataclass
class Operand:
    """An array a kernel indexes over the group's domain: a read of input `index` broadcast to `to`
    ("in"), stored value `index` ("out") or scatter scratch `index` ("scratch"); its strides over the domain
    are strides_on(domain, dims, shape, strides, to) with the array's strides (an input's at launch). A
    window term (slice_backward) reads its input `index` at strides 0 along the window's dim `window`
    ("window"), and the coordinate along that dim ("coord": stride 1 there, 0 elsewhere)."""

    kind: str
    index: int
    value: Value
    to: tuple[int, ...]
    dims: tuple[int, ...] | None
    window: int = -1

    def strides(self, domain: tuple[int, ...], element_strides: tuple[int, ...] | None = None) -> tuple[int, ...]:
        v = self.value
        if self.kind == "coord":
            return tuple(int(d == self.window) for d in range(len(domain)))
        if self.kind == "window":
            es = element_strides or contiguous(v.shape)
            return tuple(0 if d == self.window or v.shape[d] == 1 else es[d] for d in range(len(domain)))
        st = strides_on(domain, self.dims, v.shape, element_strides or contiguous(v.shape), self.to)
        if st is None:
            raise ValueError(f"G.compile: a fused CUDA kernel cannot read a {v.shape} tensor over {domain}")
        return st


@dataclass
class CudaPlan:
    """What the launcher needs besides the source: `rows` (a rows kernel, else flat), the operands in the
    order of the offsets, the scatter sums' and totals' accumulators (term, compute dtype name), whether the
    kernel checks a gathered index (`gather`), whether its rows may be split over blocks (`split`, Note
    [Split rows]) and whether a finish kernel runs."""

    rows: bool
    split: bool = False
    operands: list[Operand] = field(default_factory=list)
    scatters: list[Term] = field(default_factory=list)
    totals: list[Term] = field(default_factory=list)
    windows: list[tuple[int, int]] = field(default_factory=list)  # (input, dim): its stride there at launch
    gather: bool = False

    @property
    def finish(self) -> bool:
        return bool(self.scatters or self.totals)


def _name(v: Value) -> str:
    return f"v{v.id}" if v.id >= 0 else f"t{-v.id}"


def _store(v: Value) -> str:
    return STORAGE[v.dtype.name]


def _acc(v: Value) -> str:
    return COMPUTE_CTYPE[v.dtype.name]


def _map_line(t: Term, local: dict[int, str], indent: str) -> str:
    """The statement computing a map term from the locals of its arguments, cast to the compute type."""
    args = []
    for a in t.args:
        compute = t.compute.name if t.compute is not None else a.dtype.name
        args.append(f"opgen::cast<{COMPUTE_CTYPE[compute]}>({local[a.id]})")
    st = _store(t.out)
    return f"{indent}const {st} {_name(t.out)} = opgen::cast<{st}>({t.expr.format(*args)});"


def _divided(acc: str, t: Term) -> str:
    if t.how == "sum" and t.divide != 1.0:
        return f"{acc} / static_cast<{_acc(t.out)}>({t.divide!r})"
    return acc


class _Renderer:
    """One group's kernels, written line by line into `lines`; `plan` what their launcher needs."""

    def __init__(self, g: FusedGroup, entry: str, used_later: set[int]) -> None:
        self.g, self.entry = g, entry
        self.space = dict(g.space)
        self.produced = {t.out.id for t in g.terms}
        inputs: list[Value] = []
        for t in g.terms:
            for a in t.args:
                if a.id not in self.produced and all(a.id != w.id for w in inputs):
                    inputs.append(a)
        stored: list[Value] = []
        for t in g.terms:
            if t.out.id in used_later and t.out.id >= 0 and all(t.out.id != w.id for w in stored):
                stored.append(t.out)
        self.inputs, self.stored = inputs, stored
        g.inputs, g.outputs, g.entry = inputs, stored, entry  # also where it raises Unsupported: the fallback
        self.plan = CudaPlan(rows=g.row_dims is not None, split=self.splits())
        self.access: dict[tuple[int, tuple[int, ...]], int] = {}  # (input id, to) -> operand
        self.out_operand: dict[int, int] = {}
        for k, v in enumerate(stored):
            if self.space[v.id] == "elem" or (self.space[v.id] == "row" and not self.plan.split):
                self.out_operand[v.id] = self._operand(Operand("out", k, v, v.shape, g.row_dims))
        self.scratch: dict[int, int] = {}  # scatter value id -> its scratch's position
        self.scratch_operand: dict[int, int] = {}
        for t in g.terms:
            split_row = self.plan.split and self.space[t.out.id] == "row"  # a scatter on a split row
            if t.kind == "reduce" and (self.space[t.out.id] == "scatter" or split_row) \
                    and any(t.out.id == v.id for v in stored):
                if t.how != "sum":
                    raise Unsupported(f"a {t.how} over other dims than the group's rows")
                self.scratch[t.out.id] = len(self.plan.scatters)
                dims = g.row_dims if split_row else t.dims
                self.scratch_operand[t.out.id] = self._operand(
                    Operand("scratch", len(self.plan.scatters), t.out, t.out.shape, dims))
                self.plan.scatters.append(t)
            if t.kind == "reduce" and self.space[t.out.id] == "total":
                self.plan.totals.append(t)
        self.total_index = {t.out.id: k for k, t in enumerate(self.plan.totals)}
        self.windows: dict[int, tuple[int, int, int]] = {}  # window value id -> (its read, coord, stride param)
        for t in g.terms:  # the reads of the inputs (operands after the stored values)
            if t.kind == "window":
                a, dim = t.args[0], t.extra["dim"]
                k = next(i for i, w in enumerate(self.inputs) if w.id == a.id)
                self.windows[t.out.id] = (self._operand(Operand("window", k, a, g.shape, None, dim)),
                                          self._operand(Operand("coord", k, a, g.shape, None, dim)),
                                          len(self.plan.windows))
                self.plan.windows.append((k, dim))
                continue
            for ai, a in enumerate(t.args):
                if a.id not in self.produced:
                    self._read(a, self._read_shape(t, ai))
        self.lines: list[str] = []

    def splits(self) -> bool:
        """Whether the rows may be split over several blocks (Note [Split rows]): one phase of sums whose
        values no term reads, no row terms, gathers or totals."""
        g = self.g
        if g.row_dims is None:
            return False
        for t in g.terms:
            if (t.kind == "reduce" and t.how != "sum") or t.kind not in ("map", "reduce", "window") \
                    or self.space[t.out.id] == "total" or (t.kind == "map" and self.space[t.out.id] != "elem") \
                    or any(self.space.get(a.id) in ("row", "scatter") for a in t.args):
                return False
        return True

    def _operand(self, op: Operand) -> int:
        self.plan.operands.append(op)
        return len(self.plan.operands) - 1

    def _read_shape(self, t: Term, ai: int) -> tuple[int, ...]:
        if (t.kind == "map" and self.space[t.out.id] == "row") or (t.kind == "gather" and ai == 1):
            return t.out.shape
        return self.g.shape

    def _read(self, v: Value, to: tuple[int, ...]) -> int:
        key = (v.id, tuple(to))
        if key not in self.access:
            k = next(i for i, w in enumerate(self.inputs) if w.id == v.id)
            self.access[key] = self._operand(Operand("in", k, v, tuple(to), self.g.row_dims))
        return self.access[key]

    # -- element values ------------------------------------------------------------------------------
    def elements(self, need: set[int], local: dict[int, str], at: Any, indent: str) -> None:
        """Lines computing the element values `need` at the offsets `at(operand)`: the inputs loaded, the
        terms in order (every term's value a local of its storage type)."""
        produced, space = self.produced, self.space
        loads, need = element_reads(self.g.terms, need, produced, space)
        for vid in sorted(loads, key=lambda i: [v.id for v in self.inputs].index(i)):
            v = next(w for w in self.inputs if w.id == vid)
            op = self.access[(vid, tuple(self.g.shape))]
            self.lines.append(f"{indent}const {_store(v)} x{vid if vid >= 0 else -vid} = "
                              f"in{self.plan.operands[op].index}[{at(op)}];")
            local[vid] = f"x{vid if vid >= 0 else -vid}"
        for t in self.g.terms:
            if t.out.id in need and space[t.out.id] == "elem" and t.kind == "window":
                self.window(t, at, indent)
                local[t.out.id] = _name(t.out)
            elif t.out.id in need and space[t.out.id] == "elem":
                self.lines.append(_map_line(t, local, indent))
                local[t.out.id] = _name(t.out)

    def window(self, t: Term, at: Any, indent: str) -> None:
        """The gradient of a slice at this element: its input's element where the element falls in the
        window (first index `start`, `count` of them, `step` apart along the dim), else 0."""
        read, coord, k = self.windows[t.out.id]
        x, name, st = t.extra, _name(t.out), _store(t.out)
        d, w = f"{name}_d", f"{name}_w"
        inside = f"{d} >= 0 && {d} < {x['count'] * x['step']}LL"
        if x["step"] != 1:
            inside += f" && {d} % {x['step']}LL == 0"
        self.lines += [f"{indent}const long long {d} = static_cast<long long>({at(coord)}) - {x['start']}LL;",
                       f"{indent}const long long {w} = ({inside}) ? {d} / {x['step']}LL : -1;",
                       f"{indent}const {st} {name} = {w} >= 0 ? opgen::cast<{st}>(in{self.plan.operands[read].index}"
                       f"[{at(read)} + {w} * ws{k}]) : opgen::cast<{st}>(0);"]

    # -- kernels -------------------------------------------------------------------------------------
    def pointers(self) -> list[str]:
        out = [f"{_store(v)}* __restrict__ out{k}" for k, v in enumerate(self.stored)]
        out += [f"const {_store(v)}* __restrict__ in{k}" for k, v in enumerate(self.inputs)]
        out += [f"{_acc(t.out)}* __restrict__ sc{k}" for k, t in enumerate(self.plan.scatters)]
        out += [f"{_acc(t.out)}* __restrict__ tot{k}" for k, t in enumerate(self.plan.totals)]
        if self.plan.gather:
            out.append("int* __restrict__ err")
        out += [f"const long long ws{k}" for k in range(len(self.plan.windows))]
        return out

    def flat(self, bits: int, strided: bool) -> None:
        index_t, n = INDEX_TYPES[bits], len(self.plan.operands)
        params = [f"const {index_t} n"] + ([f"const opgen::Strided<{index_t}, {n}> st"] if strided else [])
        path = "strided" if strided else "contig"
        signature = ", ".join(params + self.pointers())
        self.lines += [f'extern "C" __global__ void {self.entry}__{path}{bits}({signature}) {{',
                       f"  OPGEN_GRID_STRIDE({index_t}, i, n) {{"]
        if strided:
            self.lines += [f"    {index_t} off[{n}];", "    st.offsets(i, off);"]

        def at(op: int) -> str:
            return f"off[{op}]" if strided else "i"

        local: dict[int, str] = {}
        self.elements({v.id for v in self.stored}, local, at, "    ")
        for v in self.stored:
            self.lines.append(f"    out{self.plan.operands[self.out_operand[v.id]].index}"
                              f"[{at(self.out_operand[v.id])}] = {local[v.id]};")
        self.lines += ["  }", "}"]

    def rows(self, bits: int) -> None:
        g, space = self.g, self.space
        index_t, n = INDEX_TYPES[bits], len(self.plan.operands)
        params = [f"const {index_t} rows", f"const {index_t} inner", f"const {index_t} splits",
                  f"const opgen::Strided<{index_t}, {n}> so", f"const opgen::Strided<{index_t}, {n}> si"]
        signature = ", ".join(params + self.pointers())
        self.lines += [f'extern "C" __global__ void {self.entry}__rows{bits}({signature}) {{',
                       f"  for ({index_t} p = blockIdx.x; p < rows * splits; p += gridDim.x) {{",
                       f"    const {index_t} o = p / splits, part = p - o * splits;",
                       f"    {index_t} ob[{n}];", "    so.offsets(o, ob);"]
        ind = "    "
        levels = [lv for vid, lv in g.level.items() if lv < (1 << 30) and space.get(vid) in ("elem", "row")]
        last = max(levels, default=0)
        row_local: dict[int, str] = {}

        def phase_of(t: Term) -> int:
            return g.level.get(t.args[0].id, 0) if t.args[0].id in self.produced else 0

        def row_section(level: int) -> None:
            for t in g.terms:
                if space[t.out.id] == "row" and t.kind in ("map", "gather") and g.level[t.out.id] == level:
                    for ai, a in enumerate(t.args):
                        if a.id not in self.produced and not (t.kind == "gather" and ai == 0) \
                                and a.id not in row_local:
                            op = self.access[(a.id, tuple(self._read_shape(t, ai)))]
                            name = f"r{op}"
                            self.lines.append(f"{ind}const {_store(a)} {name} = in{self.plan.operands[op].index}"
                                              f"[ob[{op}]];")
                            row_local[a.id] = name
                    if t.kind == "map":
                        self.lines.append(_map_line(t, row_local, ind))
                    else:
                        self.gather(t, row_local, ind, n, index_t)
                    row_local[t.out.id] = _name(t.out)
                    if t.out.id in self.out_operand:
                        op = self.out_operand[t.out.id]
                        self.lines.append(f"{ind}if (threadIdx.x == 0) out{self.plan.operands[op].index}"
                                          f"[ob[{op}]] = {_name(t.out)};")
                if t.kind == "reduce" and space[t.out.id] == "total" and phase_of(t) == level:
                    k = self.total_index[t.out.id]
                    self.lines.append(f"{ind}if (threadIdx.x == 0) atomicAdd(tot{k}, "
                                      f"opgen::cast<{_acc(t.out)}>({row_local[t.args[0].id]}));")

        def elem_pass(phase: int) -> None:
            reducing = [t for t in g.terms if t.kind == "reduce" and phase_of(t) == phase
                        and (space[t.out.id] == "row" or t.out.id in self.scratch)]
            storing = [v for v in self.stored if space[v.id] == "elem" and g.level.get(v.id, 0) == phase]
            if not reducing and not storing:
                return
            rows_red = [t for t in reducing if space[t.out.id] == "row" or self.per_row(t)]
            for t in rows_red:
                self.lines.append(f"{ind}{_acc(t.out)} {_name(t.out)}_acc = "
                                  f"{REDUCERS[t.how]}<{_acc(t.out)}>::init();")
            self.lines += [f"{ind}for ({index_t} j = part * blockDim.x + threadIdx.x; j < inner; "
                           f"j += splits * blockDim.x) {{",
                           f"{ind}  {index_t} ib[{n}];", f"{ind}  si.offsets(j, ib);"]
            local = dict(row_local)
            ii = ind + "  "
            self.elements({v.id for v in storing} | {t.args[0].id for t in reducing}, local,
                          lambda op: f"ob[{op}] + ib[{op}]", ii)
            for t in reducing:
                x = f"opgen::cast<{_acc(t.out)}>({local[t.args[0].id]})"
                if t in rows_red:
                    acc = f"{_name(t.out)}_acc"
                    self.lines.append(f"{ii}{acc} = {REDUCERS[t.how]}<{_acc(t.out)}>::step({acc}, {x}, 0);")
                else:
                    op = self.scratch_operand[t.out.id]
                    self.lines.append(f"{ii}atomicAdd(sc{self.scratch[t.out.id]} + ob[{op}] + ib[{op}], {x});")
            for v in storing:
                op = self.out_operand[v.id]
                self.lines.append(f"{ii}out{self.plan.operands[op].index}[ob[{op}] + ib[{op}]] = {local[v.id]};")
            self.lines.append(f"{ind}}}")
            for t in rows_red:
                acc = f"{_name(t.out)}_acc"
                if self.per_row(t):  # a scatter one element per row (or a split row): one atomic per row
                    op = self.scratch_operand[t.out.id]
                    sc = f"sc{self.scratch[t.out.id]}"
                    self.lines += [f"{ind}{acc} = opgen::block_combine<opgen::SumOp<{_acc(t.out)}> >({acc});",
                                   f"{ind}if (threadIdx.x == 0) atomicAdd({sc} + ob[{op}], {acc});"]
                    continue
                self.lines.append(f"{ind}{acc} = opgen::block_all<{REDUCERS[t.how]}<{_acc(t.out)}> >({acc});")
                self.lines.append(f"{ind}const {_store(t.out)} {_name(t.out)} = "
                                  f"opgen::cast<{_store(t.out)}>({_divided(acc, t)});")
                row_local[t.out.id] = _name(t.out)
                if t.out.id in self.out_operand:
                    op = self.out_operand[t.out.id]
                    self.lines.append(f"{ind}if (threadIdx.x == 0) out{self.plan.operands[op].index}[ob[{op}]] = "
                                      f"{_name(t.out)};")

        for p in range(last + 1):
            row_section(p)
            elem_pass(p)
        self.lines += ["  }", "}"]

    def per_row(self, t: Term) -> bool:
        """A scatter sum whose element does not move along the row dims (a sum over all dims beside the
        group's rows): accumulated per thread and added once per row, not once per element."""
        if t.out.id not in self.scratch:
            return False
        st = self.plan.operands[self.scratch_operand[t.out.id]].strides(self.g.shape)
        return all(st[d] == 0 for d in self.g.row_dims or ())

    def gather(self, t: Term, row_local: dict[int, str], ind: str, n: int, index_t: str) -> None:
        """A row value read from an element value at a row's index (the target's logit of a cross entropy)."""
        src, index = t.args
        out, ix = _name(t.out), f"{_name(t.out)}_ix"
        self.lines += [f"{ind}const long long {ix} = static_cast<long long>({row_local[index.id]});",
                       f"{ind}if (({ix} < 0 || {ix} >= static_cast<long long>(inner)) && {ix} != {t.skip}LL) "
                       "atomicExch(err, 1);",
                       f"{ind}{_store(t.out)} {out} = opgen::cast<{_store(t.out)}>(0);",
                       f"{ind}if ({ix} >= 0 && {ix} < static_cast<long long>(inner)) {{",
                       f"{ind}  {index_t} gb[{n}];", f"{ind}  si.offsets(static_cast<{index_t}>({ix}), gb);"]
        local = dict(row_local)
        self.elements({src.id}, local, lambda op: f"ob[{op}] + gb[{op}]", ind + "  ")
        self.lines += [f"{ind}  {out} = opgen::cast<{_store(t.out)}>({local[src.id]});", f"{ind}}}"]

    def finish(self) -> None:
        """Scatter sums divided into their outputs, the terms on totals computed and stored (one thread)."""
        sizes = [f"const unsigned long long m{k}" for k in range(len(self.plan.scatters))]
        self.lines += [f'extern "C" __global__ void {self.entry}__finish('
                       f'{", ".join(["const unsigned long long n", *sizes, *self.pointers()])}) {{',
                       "  OPGEN_GRID_STRIDE(unsigned long long, i, n) {"]
        stored = {v.id: k for k, v in enumerate(self.stored)}
        for k, t in enumerate(self.plan.scatters):
            self.lines.append(f"    if (i < m{k}) out{stored[t.out.id]}[i] = "
                              f"opgen::cast<{_store(t.out)}>({_divided(f'sc{k}[i]', t)});")
        if any(self.space[t.out.id] == "total" for t in self.g.terms):
            self.lines.append("    if (i == 0) {")
            local: dict[int, str] = {}
            for t in self.g.terms:
                if self.space[t.out.id] != "total":
                    continue
                if t.kind == "reduce":
                    k = self.total_index[t.out.id]
                    self.lines.append(f"      const {_store(t.out)} {_name(t.out)} = "
                                      f"opgen::cast<{_store(t.out)}>({_divided(f'tot{k}[0]', t)});")
                else:
                    self.lines.append(_map_line(t, local, "      "))
                local[t.out.id] = _name(t.out)
                if t.out.id in stored:
                    self.lines.append(f"      out{stored[t.out.id]}[0] = {_name(t.out)};")
            self.lines.append("    }")
        self.lines += ["  }", "}"]


def render_group(g: FusedGroup, entry: str, used_later: set[int]) -> CudaPlan:
    """The group's CUDA kernels (Note [Fused kernels on a CUDA device]) in `g.source`, its inputs, outputs
    and entry filled in; the plan its launcher follows. Raises Unsupported (inputs and outputs still set)."""
    r = _Renderer(g, entry, used_later)
    r.plan.gather = any(t.kind == "gather" for t in g.terms)
    ops = ", ".join(n.name for n in g.nodes)
    r.lines += [f"// {ops}", f"namespace {entry} {{"]
    for bits in INDEX_TYPES:
        if r.plan.rows:
            r.rows(bits)
        else:
            if not r.plan.windows:  # (a window needs the coordinate along its dim: the strided kernel)
                r.flat(bits, False)
            r.flat(bits, True)
    if r.plan.finish:
        r.finish()
    r.lines.append(f"}}  // namespace {entry}")
    g.source = "\n".join(r.lines) + "\n"
    return r.plan


def header() -> str:
    return "\n".join(["// G.compile: fused kernels (runtime/compile/cuda_render.py,",
                      "// Note [Fused kernels on a CUDA device])", *HEADER, ""])
