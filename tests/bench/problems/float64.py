"""The two helpers every independent computation starts from: a tensor widened to float64 (complex128 for
complex ones), and the float64 sum of one tensor per rank. A module of its own so that independent.py (the
dispatch) and the family modules it dispatches to can both import it without importing each other.
"""

import torch


def f64(t):
    return t.to(torch.complex128 if t.is_complex() else torch.float64)


def total(tensors):
    return torch.stack([f64(t) for t in tensors]).sum(dim=0)
