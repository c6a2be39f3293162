"""The renderers: one module per generated output (Note [One renderer per output]).

Note [One renderer per output]
Each module of this package makes one output of `generated/` and nothing else, in two steps:
`contexts(inputs)` builds its typed, frozen contexts from the loaded model (`inputs.Inputs`), and
`render(env, contexts)` turns them into `{path relative to generated/: text}` through its templates.
codegen/gen.py is the driver: it loads the model, builds the shared Python-API context once
(`python_api.py`: bindings, methods, docstrings), runs every renderer of its `RENDERERS` list inside
`render_errors.rendering()` (so a failure names its op and YAML file:line), refuses two renderers writing
one path, and writes the union. The decisions that need more than a few lines live beside the renderer
that uses them (codegen/gen_autograd.py: nodes, saving, edges; codegen/gen_cuda.py: instances and dtypes).

    ops.py             generated/_ops.py           bindings and per-op dispatch
    methods.py         generated/_methods.py       Tensor methods and dunders
    registrations.py   generated/_registrations.py every kernel, registered with the dispatcher
    autograd.py        generated/_autograd.py      backward nodes and Autograd kernels
    cpu_kernels.py     generated/_cpu_kernels.py   NumPy kernels of pointwise ops
    cuda_kernels.py    generated/_cuda_kernels.py, generated/cuda/**.cu
    fusion_specs.py    generated/_fusion_specs.py  kernel specs as C++ for G.compile
    compound_pointwise.py  generated/cpu/compound_pointwise.cpp  eager C++ kernels of compound pointwise ops
    stubs.py           generated/__init__.pyi      type stubs
    package.py         generated/__init__.py, py.typed
"""
