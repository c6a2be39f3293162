"""Autograd: the backward graph, the engine, grad mode and gradcheck (G.autograd)."""
