"""The C++ of one fused group (Note [Fused kernels with reductions] in fusion.py): loops over the domain's
dims with each tensor read at its strides, the element terms evaluated into locals, reductions accumulated.

Note [Loops of a fused kernel]
Dims of size 1 leave the loop. A kernel with row values loops over the kept dims K outside (`o`) and the
row dims D inside (`j`, one pass per phase); any other kernel loops over all dims but the last outside
and the last inside. Adjacent dims that every array (inputs at their strides, broadcast dims at 0; the
stored values, contiguous) steps through as one are merged, so a contiguous kernel is one flat loop, and
each array's offset is the outer part (once per `o`) plus the inner part (`j` times a stride when D is
one dim). The inner loop is what the compiler vectorises: plain maps by themselves, sums through
`omp simd reduction` (which lets them be reassociated), scatters when each `j` writes its own element,
and a scattered sum whose element does not move with `j` (a sum over the inner dim kept by an outer one:
a convolution's bias gradient) through a local `omp simd reduction` added into its element after the loop.
Checked with -fopt-info-vec-optimized: the GELU-residual's loop, every pass of a softmax and of a layer
norm, and a sum over the first dim vectorise with 32-byte vectors (AVX2) on the build machine.
Threads (Note [Threads of fused kernels]) split `o` (row kernels) or the flat element range (the others).
The kernel returns 0, or 1 when a gathered index (a cross entropy's target) is out of range: the program
then runs the nodes eagerly, which raise the eager error.
"""

from __future__ import annotations

import math

from runtime.compile.fusion import FusedGroup, contiguous, strides_on
from runtime.compile.graph import Value
from runtime.compile.kernel_terms import CTYPE, Term, element_reads

_INF = 1 << 30


def _name(v: Value) -> str:
    return f"v{v.id}" if v.id >= 0 else f"t{-v.id}"


def _coalesce(dims: list[int], shape: tuple[int, ...], arrays: list[tuple[int, ...]]) -> list[tuple[int, list[int]]]:
    """Adjacent dims merged where every array steps through them as one: (size, dims) from outer to inner."""
    out: list[tuple[int, list[int]]] = []
    for d in dims:
        if out:
            size, group = out[-1]
            a = group[-1]
            if all(st[a] == st[d] * shape[d] for st in arrays):
                out[-1] = (size * shape[d], [*group, d])
                continue
        out.append((shape[d], [d]))
    return out


def _offset(var: str, loops: list[tuple[int, list[int]]], st: tuple[int, ...]) -> str:
    terms = []
    inner = 1
    for k in reversed(range(len(loops))):
        size, dims = loops[k]
        s = st[dims[-1]]
        if s:
            idx = var if inner == 1 else f"({var} / {inner}LL)"
            if k > 0:
                idx = f"({idx} % {size}LL)"
            terms.append(idx if s == 1 else f"{idx} * {s}LL")
        inner *= size
    return " + ".join(terms) or "0"


def render(g: FusedGroup, entry: str, used_later: set[int]) -> None:
    """Fill in the group's inputs, outputs, entry point, source and threading facts."""
    S, D = g.shape, g.row_dims
    space = dict(g.space)
    produced = {t.out.id for t in g.terms}
    row_read = any(space.get(a.id) == "row" for t in g.terms for a in t.args)
    big = [d for d in range(len(S)) if S[d] > 1]
    trailing = D is not None and [d for d in big if d in D] == big[len(big) - len([d for d in big if d in D]):]
    rows = D is not None and (row_read or trailing or any(
        space[t.out.id] == "row" and t.kind != "reduce" for t in g.terms))
    if not rows:
        for t in g.terms:
            if t.kind == "reduce" and space[t.out.id] == "row":
                space[t.out.id] = "scatter"
    outer_dims, inner_dims = [d for d in big if d not in (D or ())], [d for d in big if d in (D or ())]

    inputs: list[Value] = []
    for t in g.terms:
        for a in t.args:
            if a.id not in produced and all(a.id != w.id for w in inputs):
                inputs.append(a)
    stored: list[Value] = []
    for t in g.terms:
        if t.out.id in used_later and t.out.id >= 0 and all(t.out.id != w.id for w in stored):
            stored.append(t.out)
    by_term = {t.out.id: t for t in g.terms}

    # array accesses: (pointer, strides over S)
    access: dict[tuple[int, tuple[int, ...]], str] = {}
    access_strides: dict[str, tuple[int, ...]] = {}
    param = {v.id: f"in{k}" for k, v in enumerate(inputs)}

    def reads(v: Value, to: tuple[int, ...]) -> str:
        st = strides_on(S, D, v.shape, v.strides, to)
        assert st is not None
        key = (v.id, st)
        if key not in access:
            name = f"e{len(access)}"
            access[key] = name
            access_strides[name] = st
        return access[key]

    ext_elem: dict[int, str] = {}  # input id -> access read by element terms
    ext_row: dict[tuple[int, int], str] = {}  # (term index, arg position) -> access of a row term's input
    windows: dict[int, tuple[str, tuple[int, ...]]] = {}  # window term's value id -> (access, index of its dim)
    for ti, t in enumerate(g.terms):
        out_space = space[t.out.id]
        if t.kind == "window":
            a, dim = t.args[0], t.extra["dim"]
            st = tuple(0 if d == dim or a.shape[d] == 1 else a.strides[d] for d in range(len(S)))
            name = f"e{len(access)}"
            access[(a.id, (-1 - ti, *st))] = name
            access_strides[name] = st
            windows[t.out.id] = (name, tuple(1 if d == dim else 0 for d in range(len(S))))
            continue
        for ai, a in enumerate(t.args):
            if a.id in produced:
                continue
            if t.kind == "map" and out_space == "row":
                ext_row[(ti, ai)] = reads(a, t.out.shape)
            elif t.kind == "gather" and ai == 1:
                ext_row[(ti, ai)] = reads(a, t.out.shape)
            elif t.kind == "map" and out_space == "total":
                raise AssertionError("a final term reads only totals")
            else:
                ext_elem[a.id] = reads(a, S)
    out_param = {v.id: f"out{k}" for k, v in enumerate(stored)}
    out_strides: dict[int, tuple[int, ...]] = {}
    for v in stored:
        if space[v.id] == "elem":
            out_strides[v.id] = contiguous(S)
        elif space[v.id] == "scatter":
            t = by_term[v.id]
            st = strides_on(S, t.dims, v.shape, contiguous(v.shape), v.shape)
            assert st is not None
            out_strides[v.id] = st
    scatters = [t for t in g.terms if t.kind == "reduce" and space[t.out.id] == "scatter"
                and (t.out.id in out_param)]
    scatter_strides = {}
    for t in scatters:
        st = strides_on(S, t.dims, t.out.shape, contiguous(t.out.shape), t.out.shape)
        assert st is not None
        scatter_strides[t.out.id] = st
    arrays = list(access_strides.values()) + list(out_strides.values()) + list(scatter_strides.values()) \
        + [ind for _, ind in windows.values()]  # a window's dim keeps a loop of its own
    if rows:
        outer, inner = _coalesce(outer_dims, S, arrays), _coalesce(inner_dims, S, arrays)
    else:  # the inner loop runs over every trailing dim that all arrays step through as one
        merged = _coalesce(big, S, arrays)
        outer, inner = merged[:-1], merged[-1:]
    n_outer = math.prod(s for s, _ in outer)
    n_inner = math.prod(s for s, _ in inner)
    g.parallel = not scatters
    inner_moves = all(all(st[ds[-1]] for _, ds in inner) for st in scatter_strides.values())

    def ctype(v: Value) -> str:
        return CTYPE[v.dtype.name]

    def arg_expr(t: Term, ai: int, a: Value, local: dict[int, str]) -> str:
        name = local.get(a.id)
        if name is None:
            name = ext_row[(g.terms.index(t), ai)] + "v" if space[t.out.id] == "row" else ext_elem[a.id] + "v"
        if t.compute is not None and a.dtype is not t.compute:
            return f"static_cast<{CTYPE[t.compute.name]}>({name})"
        return name

    def map_line(t: Term, local: dict[int, str], indent: str) -> str:
        args = [arg_expr(t, ai, a, local) for ai, a in enumerate(t.args)]
        return f"{indent}const {ctype(t.out)} {_name(t.out)} = static_cast<{ctype(t.out)}>({t.expr.format(*args)});"

    levels = [lv for vid, lv in g.level.items() if lv < _INF and space.get(vid) in ("elem", "row")]
    last = max(levels, default=0) if rows else 0

    def phase_of(t: Term) -> int:
        return g.level.get(t.args[0].id, 0) if t.args[0].id in produced else 0

    body: list[str] = []
    pre: list[str] = []
    post: list[str] = []
    totals = [t for t in g.terms if space[t.out.id] == "total" and t.kind == "reduce"]
    for t in totals:
        pre.append(f"  double {_name(t.out)}_acc = 0.0;")
    for t in scatters:
        init = "0.0" if t.how == "sum" else ("-INFINITY" if t.how == "max" else "INFINITY")
        pre.append(f"  std::vector<double> {_name(t.out)}_acc({math.prod(t.out.shape)}, {init});")

    row_local: dict[int, str] = {}
    row_loaded: set[str] = set()
    ind = "    " if rows else "      "
    if rows:
        for name, st in access_strides.items():
            body.append(f"{ind}const long long b_{name} = {_offset('o', outer, st)};")
        for vid, st in out_strides.items():
            body.append(f"{ind}const long long b_{out_param[vid]} = {_offset('o', outer, st)};")
        for vid, st in scatter_strides.items():
            body.append(f"{ind}const long long b_sc{-vid if vid < 0 else vid} = {_offset('o', outer, st)};")

    def row_section(level: int) -> None:
        for ti, t in enumerate(g.terms):
            if space[t.out.id] == "row" and t.kind in ("map", "gather") and g.level[t.out.id] == level:
                for ai, a in enumerate(t.args):
                    if a.id not in produced and not (t.kind == "gather" and ai == 0):
                        name = ext_row[(ti, ai)]
                        v = ext_row[(ti, ai)] + "v"
                        if v not in row_loaded:
                            body.append(f"{ind}const {ctype(a)} {v} = {param[a.id]}[b_{name}];")
                            row_loaded.add(v)
                if t.kind == "map":
                    body.append(map_line(t, row_local, ind))
                else:
                    src, index = t.args
                    ix = row_local.get(index.id, ext_row.get((ti, 1), "") + "v")
                    limit = t.extra["limit"]
                    out, ixn = _name(t.out), f"{_name(t.out)}_ix"
                    body.append(f"{ind}const long long {ixn} = {ix};")
                    body.append(f"{ind}if (({ixn} < 0 || {ixn} >= {limit}LL) && {ixn} != {t.skip}LL) {{\n"
                                f"{ind}  #pragma omp atomic write\n{ind}  err = 1;\n{ind}}}")
                    body.append(f"{ind}{ctype(t.out)} {out} = static_cast<{ctype(t.out)}>(0);")
                    body.append(f"{ind}if ({ixn} >= 0 && {ixn} < {limit}LL) {{")
                    body.append(f"{ind}  const long long j = {ixn};")
                    local = dict(row_local)
                    elements({src.id}, local, ind + "  ")
                    body.append(f"{ind}  {out} = {local[src.id]};")
                    body.append(f"{ind}}}")
                row_local[t.out.id] = _name(t.out)
                if t.out.id in out_param:
                    body.append(f"{ind}{out_param[t.out.id]}[o] = {_name(t.out)};")
            if t.kind == "reduce" and space[t.out.id] == "total" and g.level.get(t.args[0].id, 0) == level:
                body.append(f"{ind}{_name(t.out)}_acc += static_cast<double>({row_local[t.args[0].id]});")

    def elements(need: set[int], local: dict[int, str], ii: str) -> None:
        """Lines computing the element values `need` (ids of the group's values or inputs) at inner index j,
        with what they read: the inputs loaded, the terms in order."""
        loads, need = element_reads(g.terms, need, produced, space)
        for vid in sorted(loads, key=lambda i: [v.id for v in inputs].index(i)):
            name = ext_elem[vid]
            v = next(w for w in inputs if w.id == vid)
            where = _offset("j", inner, access_strides[name])
            body.append(f"{ii}const {ctype(v)} {name}v = {param[vid]}[b_{name} + {where}];")
            local[vid] = f"{name}v"
        for t in g.terms:
            if t.out.id in need and space[t.out.id] == "elem" and t.kind == "window":
                name, indicator = windows[t.out.id]
                a, x = t.args[0], t.extra
                d, at = f"{_name(t.out)}_d", f"{_name(t.out)}_at"
                body.append(f"{ii}const long long {d} = {_offset('o', outer, indicator)} + "
                            f"{_offset('j', inner, indicator)} - {x['start']}LL;")
                inside = f"{d} >= 0 && {d} < {x['count'] * x['step']}LL"
                if x["step"] != 1:
                    inside += f" && {d} % {x['step']}LL == 0"
                body.append(f"{ii}const long long {at} = ({inside}) ? {d} / {x['step']}LL : -1;")
                where = f"b_{name} + {_offset('j', inner, access_strides[name])} + {at} * {a.strides[x['dim']]}LL"
                body.append(f"{ii}const {ctype(t.out)} {_name(t.out)} = {at} >= 0 ? {param[a.id]}[{where}] : "
                            f"static_cast<{ctype(t.out)}>(0);")
                local[t.out.id] = _name(t.out)
            elif t.out.id in need and space[t.out.id] == "elem":
                body.append(map_line(t, local, ii))
                local[t.out.id] = _name(t.out)

    def elem_pass(phase: int) -> None:
        reducing = [t for t in g.terms if t.kind == "reduce" and space[t.out.id] in ("row", "scatter")
                    and phase_of(t) == phase and (space[t.out.id] == "row" or t.out.id in out_param)]
        storing = [v for v in stored if space[v.id] == "elem" and g.level.get(v.id, 0) == phase]
        if not reducing and not storing:
            return
        rows_red = [t for t in reducing if space[t.out.id] == "row"]
        scat = [t for t in reducing if space[t.out.id] == "scatter"]
        for t in rows_red:
            init = "0.0" if t.how == "sum" else f"static_cast<{ctype(t.out)}>({'-' if t.how == 'max' else ''}INFINITY)"
            kind = "double" if t.how == "sum" else ctype(t.out)
            body.append(f"{ind}{kind} {_name(t.out)}_acc = {init};")
        sums = [f"{_name(t.out)}_acc" for t in rows_red if t.how == "sum"]
        # a scattered sum whose element does not move with j adds into a local across the inner loop and
        # into its slot once after it (the loop vectorises, without a store per element)
        still = {t.out.id for t in scat if t.how == "sum"
                 and all(scatter_strides[t.out.id][d] == 0 for _, ds in inner for d in ds)}
        for t in scat:
            if t.out.id in still:
                body.append(f"{ind}double {_name(t.out)}_sacc = 0.0;")
                sums.append(f"{_name(t.out)}_sacc")
        moving = [t for t in scat if t.out.id not in still]
        simd = all(t.how == "sum" for t in rows_red) and (not moving or inner_moves)
        j_range = ("j0", "j1") if not rows else ("0", f"{n_inner}LL")
        if simd:
            body.append(f"{ind}#pragma omp simd" + (f" reduction(+:{', '.join(sums)})" if sums else ""))
        body.append(f"{ind}for (long long j = {j_range[0]}; j < {j_range[1]}; ++j) {{")
        local = dict(row_local)
        ii = ind + "  "
        elements({v.id for v in storing} | {t.args[0].id for t in reducing}, local, ii)
        for t in rows_red:
            x = local[t.args[0].id]
            acc = f"{_name(t.out)}_acc"
            if t.how == "sum":
                body.append(f"{ii}{acc} += static_cast<double>({x});")
            else:
                op = ">" if t.how == "max" else "<"
                body.append(f"{ii}{acc} = ({x} {op} {acc} || {x} != {x}) ? {x} : {acc};")
        for t in scat:
            x = local[t.args[0].id]
            vid = t.out.id
            if vid in still:
                body.append(f"{ii}{_name(t.out)}_sacc += static_cast<double>({x});")
                continue
            where = f"b_sc{-vid if vid < 0 else vid} + {_offset('j', inner, scatter_strides[vid])}"
            acc = f"{_name(t.out)}_acc[{where}]"
            if t.how == "sum":
                body.append(f"{ii}{acc} += static_cast<double>({x});")
            else:
                op = ">" if t.how == "max" else "<"
                body.append(f"{ii}{acc} = ({x} {op} {acc} || {x} != {x}) ? {x} : {acc};")
        for v in storing:
            body.append(f"{ii}{out_param[v.id]}[b_{out_param[v.id]} + {_offset('j', inner, out_strides[v.id])}] = "
                        f"{local[v.id]};")
        body.append(f"{ind}}}")
        for t in scat:
            if t.out.id in still:
                vid = t.out.id
                body.append(f"{ind}{_name(t.out)}_acc[b_sc{-vid if vid < 0 else vid}] += {_name(t.out)}_sacc;")
        for t in rows_red:
            acc = f"{_name(t.out)}_acc"
            value = f"{acc} / {t.divide!r}" if t.how == "sum" and t.divide != 1.0 else acc
            body.append(f"{ind}const {ctype(t.out)} {_name(t.out)} = static_cast<{ctype(t.out)}>({value});")
            row_local[t.out.id] = _name(t.out)
            if t.out.id in out_param:
                body.append(f"{ind}{out_param[t.out.id]}[o] = {_name(t.out)};")

    for p in range(last + 1):
        row_section(p)
        elem_pass(p)
    for t in g.terms:  # final terms
        if space[t.out.id] != "total":
            continue
        if t.kind == "reduce":
            value = f"{_name(t.out)}_acc / {t.divide!r}" if t.divide != 1.0 else f"{_name(t.out)}_acc"
            post.append(f"  const {ctype(t.out)} {_name(t.out)} = static_cast<{ctype(t.out)}>({value});")
        else:
            post.append(map_line(t, {a.id: _name(a) for a in t.args}, "  "))
        if t.out.id in out_param:
            post.append(f"  {out_param[t.out.id]}[0] = {_name(t.out)};")
    for t in scatters:
        n = math.prod(t.out.shape)
        value = f"{_name(t.out)}_acc[k]"
        if t.how == "sum" and t.divide != 1.0:
            value += f" / {t.divide!r}"
        post.append(f"  for (long long k = 0; k < {n}LL; ++k) {out_param[t.out.id]}[k] = "
                    f"static_cast<{ctype(t.out)}>({value});")

    params = [f"const {ctype(v)}* __restrict {param[v.id]}" for v in inputs]
    params += [f"{ctype(v)}* __restrict {out_param[v.id]}" for v in stored]
    params.append("long long nthreads")
    ops = ", ".join(n.name for n in g.nodes)
    lines = [f"// {ops}", f'extern "C" int {entry}({", ".join(params)}) {{', "  int err = 0;", *pre]
    if rows:
        red = [f"{_name(t.out)}_acc" for t in totals]
        clause = f" reduction(+:{', '.join(red)})" if red else ""
        lines.append(f"  #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static){clause}")
        lines.append(f"  for (long long o = 0; o < {n_outer}LL; ++o) {{")
        lines += body
        lines.append("  }")
    else:
        total = n_outer * n_inner
        lines.append("  #pragma omp parallel num_threads(nthreads) if(nthreads > 1)")
        lines.append("  {")
        lines.append(f"    long long lo = 0, hi = {total}LL;")
        lines.append("#ifdef _OPENMP")
        lines.append("    const long long t = omp_get_thread_num(), nt = omp_get_num_threads();")
        lines.append(f"    lo = {total}LL * t / nt;")
        lines.append(f"    hi = {total}LL * (t + 1) / nt;")
        lines.append("#endif")
        lines.append(f"    for (long long o = lo / {n_inner}LL; o * {n_inner}LL < hi; ++o) {{")
        lines.append(f"      const long long j0 = o * {n_inner}LL < lo ? lo - o * {n_inner}LL : 0;")
        lines.append(f"      const long long j1 = (o + 1) * {n_inner}LL > hi ? hi - o * {n_inner}LL : {n_inner}LL;")
        for name, st in access_strides.items():
            lines.append(f"      const long long b_{name} = {_offset('o', outer, st)};")
        for vid, st in out_strides.items():
            lines.append(f"      const long long b_{out_param[vid]} = {_offset('o', outer, st)};")
        for vid, st in scatter_strides.items():
            lines.append(f"      const long long b_sc{-vid if vid < 0 else vid} = {_offset('o', outer, st)};")
        lines += body
        lines.append("    }")
        lines.append("  }")
    lines += post
    lines += ["  return err;", "}", ""]
    g.inputs, g.outputs, g.entry = inputs, stored, entry
    g.source = "\n".join(lines)
    g.work = math.prod(S) * (last + 1)


def kernel_arguments(g: FusedGroup) -> int:
    """The pointers the kernel takes (its inputs and stored values), before the thread count."""
    return len(g.inputs) + len(g.outputs)

