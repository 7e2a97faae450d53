"""Signature parity with torch 2.13: keyword names, defaults, keyword-only parameters, refused keywords.

Every case is a program run with torch and with ember (see twins.py). The
expectations come from torch, checked by running it: ACCEPTED programs must
give the same result in both, REFUSED ones must raise a TypeError in both that
names the offending keyword (or the parameter given by position).

The parameter names are torch's, read from the overloads its argument parser
lists in "invalid combination of arguments" errors (also in
torch/_C/_VariableFunctions.pyi) and confirmed by the calls below. NumPy's
aliases (axis=, keepdims=, x=, ...) are tested in test_aliases_and_matmul.py.
"""
import numpy as np
import pytest

from twins import both, both_raise, normalise


def m(L):
    """A 2x3 float tensor."""
    return L.tensor([[1.0, -2.0, 3.5], [-4.0, 5.0, -6.25]])


def v(L):
    return L.tensor([1.0, 2.0, 3.0])


def sq(L):
    return L.tensor([[2.0, 1.0], [1.0, 3.0]])


def col(L):
    """A 2x1x3 tensor with a dim of size 1."""
    return m(L).unsqueeze(1)


def shape_of(t):
    return tuple(t.shape), t.dtype


def _out(L, fn):
    out = L.zeros(1)
    fn(out)
    return out


ACCEPTED = {
    # ---- elementwise, by keyword
    "abs(input=)": lambda L: L.abs(input=m(L)),
    "absolute(input=)": lambda L: L.absolute(input=m(L)),
    "ceil(input=)": lambda L: L.ceil(input=m(L)),
    "floor(input=)": lambda L: L.floor(input=m(L)),
    "trunc(input=)": lambda L: L.trunc(input=m(L)),
    "exp(input=)": lambda L: L.exp(input=v(L)),
    "log(input=)": lambda L: L.log(input=v(L)),
    "sqrt(input=)": lambda L: L.sqrt(input=v(L)),
    "reciprocal(input=)": lambda L: L.reciprocal(input=v(L)),
    "sigmoid(input=)": lambda L: L.sigmoid(input=v(L)),
    "tanh(input=)": lambda L: L.tanh(input=v(L)),
    "relu(input=)": lambda L: L.relu(input=m(L)),
    "sign(input=)": lambda L: L.sign(input=m(L)),
    "neg(input=)": lambda L: L.neg(input=m(L)),
    "negative(input=)": lambda L: L.negative(input=m(L)),
    "round(input=)": lambda L: L.round(input=m(L)),
    "round(decimals=)": lambda L: L.round(m(L), decimals=1),
    "round(decimals=0) default": lambda L: L.round(m(L), decimals=0),
    "clamp(input=, min=, max=)": lambda L: L.clamp(input=m(L), min=-1.0, max=2.0),
    "clamp(min=) only": lambda L: L.clamp(m(L), min=0.0),
    "clamp(max=) only": lambda L: L.clamp(m(L), max=0.0),
    "clamp positional": lambda L: L.clamp(m(L), -1.0, 2.0),
    "clip(min=, max=)": lambda L: L.clip(input=m(L), min=-1.0, max=2.0),
    "clamp_min(min=)": lambda L: L.clamp_min(input=m(L), min=0.0),
    "clamp_max(max=)": lambda L: L.clamp_max(input=m(L), max=0.0),
    "add(input=, other=, alpha=)": lambda L: L.add(input=m(L), other=m(L), alpha=2),
    "add(alpha=1) default": lambda L: L.add(m(L), m(L), alpha=1),
    "add(out=)": lambda L: L.add(v(L), 1.0, out=L.zeros(3)),
    "sub(input=, other=, alpha=)": lambda L: L.sub(input=m(L), other=1.0, alpha=3),
    "rsub(input=, other=, alpha=)": lambda L: L.rsub(input=m(L), other=1.0, alpha=3),
    "mul(input=, other=)": lambda L: L.mul(input=m(L), other=2.0),
    "mul(out=)": lambda L: L.mul(v(L), 2.0, out=L.zeros(3)),
    "div(input=, other=)": lambda L: L.div(input=m(L), other=2.0),
    "div(rounding_mode=)": lambda L: L.div(m(L), 2.0, rounding_mode="floor"),
    "div(rounding_mode=None) default": lambda L: L.div(m(L), 2.0, rounding_mode=None),
    "true_divide(input=, other=)": lambda L: L.true_divide(input=m(L), other=2.0),
    "pow(input=, exponent=)": lambda L: L.pow(input=m(L), exponent=2),
    "pow(out=)": lambda L: L.pow(v(L), 2, out=L.zeros(3)),
    "eq(input=, other=)": lambda L: L.eq(input=m(L), other=1.0),
    "ne(input=, other=)": lambda L: L.ne(input=m(L), other=1.0),
    "lt(input=, other=)": lambda L: L.lt(input=m(L), other=1.0),
    "le(input=, other=)": lambda L: L.le(input=m(L), other=1.0),
    "gt(input=, other=)": lambda L: L.gt(input=m(L), other=1.0),
    "ge(input=, other=)": lambda L: L.ge(input=m(L), other=1.0),
    "greater(input=, other=)": lambda L: L.greater(input=m(L), other=1.0),
    "greater_equal(input=, other=)": lambda L: L.greater_equal(input=m(L), other=1.0),
    "less(input=, other=)": lambda L: L.less(input=m(L), other=1.0),
    "less_equal(input=, other=)": lambda L: L.less_equal(input=m(L), other=1.0),
    "not_equal(input=, other=)": lambda L: L.not_equal(input=m(L), other=1.0),
    "eq(out=)": lambda L: L.eq(v(L), 2.0, out=L.zeros(3, dtype=L.bool)),
    "equal(input=, other=)": lambda L: L.equal(input=m(L), other=m(L)),
    "where(condition=, input=, other=)": lambda L: L.where(condition=m(L) > 0, input=m(L), other=0.0),
    # ---- reductions
    "sum(input=)": lambda L: L.sum(input=m(L)),
    "sum(dtype=)": lambda L: L.sum(m(L), dtype=L.float64),
    "sum(dim=, keepdim=, dtype=)": lambda L: L.sum(input=m(L), dim=1, keepdim=True, dtype=L.float64),
    "sum(dim=tuple)": lambda L: L.sum(m(L), dim=(0, 1)),
    "sum(dim=None) keepdim positional": lambda L: L.sum(m(L), None, True),
    "sum(keepdim=False) default": lambda L: L.sum(m(L), 0, False),
    "mean(input=, dim=, keepdim=, dtype=)": lambda L: L.mean(input=m(L), dim=0, keepdim=True, dtype=L.float64),
    "mean(dtype=)": lambda L: L.mean(m(L), dtype=L.float64),
    "all(input=, dim=, keepdim=)": lambda L: L.all(input=m(L) > 0, dim=1, keepdim=True),
    "all(dim=tuple)": lambda L: L.all(m(L) > 0, dim=(0, 1)),
    "any(input=, dim=, keepdim=)": lambda L: L.any(input=m(L) > 0, dim=1, keepdim=True),
    "amax(input=, dim=, keepdim=)": lambda L: L.amax(input=m(L), dim=1, keepdim=True),
    "amax(dim=()) default": lambda L: L.amax(m(L), dim=()),
    "amin(input=, dim=, keepdim=)": lambda L: L.amin(input=m(L), dim=0, keepdim=False),
    "amin(keepdim=) without dim": lambda L: L.amin(m(L), keepdim=True),
    "norm(input=, p=, dim=, keepdim=)": lambda L: L.norm(input=m(L), p=1, dim=1, keepdim=True),
    "norm(p='fro') default": lambda L: L.norm(m(L), p="fro"),
    "norm(dtype=)": lambda L: L.norm(m(L), dtype=L.float64),
    # ---- matrix products
    "matmul(input=, other=)": lambda L: L.matmul(input=sq(L), other=sq(L)),
    "mm(input=, mat2=)": lambda L: L.mm(input=sq(L), mat2=sq(L)),
    "dot(input=, tensor=)": lambda L: L.dot(input=v(L), tensor=v(L)),
    "addmm(input=, mat1=, mat2=, beta=, alpha=)": lambda L: L.addmm(input=sq(L), mat1=sq(L), mat2=sq(L), beta=2, alpha=3),
    "addmm(out=)": lambda L: L.addmm(sq(L), sq(L), sq(L), out=L.zeros(2, 2)),
    # ---- views and shapes
    "reshape(input=, shape=)": lambda L: L.reshape(input=m(L), shape=(3, 2)),
    "reshape(shape=)": lambda L: L.reshape(m(L), shape=(3, -1)),
    "view: x.view(size=)": lambda L: m(L).view(size=(3, 2)),
    "permute(input=, dims=)": lambda L: L.permute(input=m(L), dims=(1, 0)),
    "flatten(input=, start_dim=, end_dim=)": lambda L: L.flatten(input=col(L), start_dim=1, end_dim=2),
    "flatten(end_dim=-1) default": lambda L: L.flatten(col(L), 0, -1),
    "transpose(input=, dim0=, dim1=)": lambda L: L.transpose(input=m(L), dim0=0, dim1=1),
    "swapdims(input=, dim0=, dim1=)": lambda L: L.swapdims(input=m(L), dim0=0, dim1=1),
    "swapaxes(input=, axis0=, axis1=)": lambda L: L.swapaxes(input=m(L), axis0=0, axis1=1),
    "t(input=)": lambda L: L.t(input=m(L)),
    "squeeze(input=, dim=)": lambda L: L.squeeze(input=col(L), dim=1),
    "squeeze(dim=tuple)": lambda L: L.squeeze(col(L), dim=(0, 1)),
    "unsqueeze(input=, dim=)": lambda L: L.unsqueeze(input=m(L), dim=0),
    "narrow(input=, dim=, start=, length=)": lambda L: L.narrow(input=m(L), dim=1, start=1, length=2),
    "select(input=, dim=, index=)": lambda L: L.select(input=m(L), dim=1, index=2),
    "unbind(input=, dim=)": lambda L: L.unbind(input=m(L), dim=1),
    "broadcast_to(input=, size=)": lambda L: L.broadcast_to(input=v(L), size=(2, 3)),
    "cat(tensors=, dim=)": lambda L: L.cat(tensors=[m(L), m(L)], dim=1),
    "cat(out=)": lambda L: L.cat([v(L), v(L)], out=L.zeros(6)),
    "concat(tensors=, dim=)": lambda L: L.concat(tensors=[m(L), m(L)], dim=1),
    "concatenate(tensors=, dim=)": lambda L: L.concatenate(tensors=[m(L), m(L)], dim=1),
    "stack(tensors=, dim=)": lambda L: L.stack(tensors=[v(L), v(L)], dim=1),
    "clone(input=, memory_format=)": lambda L: L.clone(input=m(L), memory_format=L.preserve_format),
    "index_put(input=, indices=, values=, accumulate=)":
        lambda L: L.index_put(input=v(L), indices=(L.tensor([0, 0]),), values=L.tensor(1.0), accumulate=True),
    # ---- queries and dtypes
    "numel(input=)": lambda L: L.numel(input=m(L)),
    "is_floating_point(input=)": lambda L: L.is_floating_point(input=m(L)),
    "can_cast(from_=, to=)": lambda L: L.can_cast(from_=L.float64, to=L.int32),
    "promote_types(type1=, type2=)": lambda L: L.promote_types(type1=L.float32, type2=L.int64),
    "result_type(tensor=, other=)": lambda L: L.result_type(tensor=m(L), other=1),
    "result_type(scalar1=, scalar2=)": lambda L: L.result_type(scalar1=1, scalar2=2.0),
    "result_type(scalar=, tensor=)": lambda L: L.result_type(scalar=1.0, tensor=L.tensor([1])),
    "manual_seed(seed=)": lambda L: L.manual_seed(seed=3).initial_seed(),
    "set_printoptions(precision=...) by keyword":
        lambda L: (L.set_printoptions(precision=4, threshold=1000, edgeitems=3, linewidth=80, profile=None,
                                      sci_mode=None), repr(L.tensor([1.0])))[1],
    # ---- creation
    "tensor(data=, dtype=, device=, requires_grad=, pin_memory=)":
        lambda L: L.tensor(data=[1, 2], dtype=L.float64, device="cpu", requires_grad=True, pin_memory=False),
    "as_tensor(data=, dtype=, device=)": lambda L: L.as_tensor(data=[1, 2], dtype=L.float64, device="cpu"),
    "zeros(size=)": lambda L: L.zeros(size=(2, 3), dtype=L.float64),
    "zeros(size=list)": lambda L: L.zeros(size=[2]),
    "ones(size=)": lambda L: L.ones(size=(2, 3)),
    "empty(size=, memory_format=)": lambda L: shape_of(L.empty(size=(2, 3), memory_format=L.contiguous_format)),
    "full(size=, fill_value=)": lambda L: L.full(size=(2, 2), fill_value=7.0, dtype=L.float64),
    "full(out=)": lambda L: L.full((2,), 1.0, out=L.zeros(2)),
    "eye(n=, m=)": lambda L: L.eye(n=2, m=3),
    "eye(n=)": lambda L: L.eye(n=2, dtype=L.int64),
    "arange(end=)": lambda L: L.arange(end=4),
    "arange(start=, end=, step=)": lambda L: L.arange(start=1, end=7, step=2),
    "arange(start=, end=)": lambda L: L.arange(start=1, end=3, dtype=L.float64),
    "linspace(start=, end=, steps=)": lambda L: L.linspace(start=0.0, end=1.0, steps=5),
    "rand(size=, generator=)": lambda L: shape_of(L.rand(size=(2, 3), generator=None)),
    "randn(size=)": lambda L: shape_of(L.randn(size=(2, 3), dtype=L.float64)),
    "randint(low=, high=, size=)": lambda L: shape_of(L.randint(low=0, high=5, size=(2, 3))),
    "randint(high=, size=)": lambda L: shape_of(L.randint(high=5, size=(4,))),
    "randperm(n=)": lambda L: shape_of(L.randperm(n=5)),
    "zeros_like(input=, dtype=, memory_format=)":
        lambda L: L.zeros_like(input=m(L), dtype=L.int64, memory_format=L.preserve_format),
    "ones_like(input=)": lambda L: L.ones_like(input=m(L), requires_grad=True),
    "empty_like(input=)": lambda L: shape_of(L.empty_like(input=m(L))),
    "full_like(input=, fill_value=)": lambda L: L.full_like(input=m(L), fill_value=3.0),
    "rand_like(input=, generator=)": lambda L: shape_of(L.rand_like(input=m(L), generator=None)),
    "randn_like(input=)": lambda L: shape_of(L.randn_like(input=m(L))),
    # ---- Tensor methods
    "x.add(other=, alpha=)": lambda L: m(L).add(other=m(L), alpha=2),
    "x.sub(other=, alpha=)": lambda L: m(L).sub(other=1.0, alpha=2),
    "x.mul(other=)": lambda L: m(L).mul(other=2.0),
    "x.div(other=, rounding_mode=)": lambda L: m(L).div(other=2.0, rounding_mode="trunc"),
    "x.true_divide(other=)": lambda L: m(L).true_divide(other=2.0),
    "x.pow(exponent=)": lambda L: m(L).pow(exponent=2),
    "x.eq(other=)": lambda L: m(L).eq(other=1.0),
    "x.ne/lt/le/gt/ge(other=)":
        lambda L: [getattr(m(L), op)(other=1.0) for op in ("ne", "lt", "le", "gt", "ge")],
    "x.equal(other=)": lambda L: m(L).equal(other=m(L)),
    "x.where(condition=, other=)": lambda L: m(L).where(condition=m(L) > 0, other=0.0),
    "x.clamp(min=, max=)": lambda L: m(L).clamp(min=-1.0, max=1.0),
    "x.clip(min=, max=)": lambda L: m(L).clip(min=-1.0, max=1.0),
    "x.clamp_min(min=)": lambda L: m(L).clamp_min(min=0.0),
    "x.clamp_max(max=)": lambda L: m(L).clamp_max(max=0.0),
    "x.round(decimals=)": lambda L: m(L).round(decimals=1),
    "x.sum(dim=, keepdim=, dtype=)": lambda L: m(L).sum(dim=0, keepdim=True, dtype=L.float64),
    "x.sum(dtype=)": lambda L: m(L).sum(dtype=L.float64),
    "x.sum(None, True)": lambda L: m(L).sum(None, True),
    "x.mean(dim=, keepdim=, dtype=)": lambda L: m(L).mean(dim=1, keepdim=False, dtype=L.float64),
    "x.all/any(dim=, keepdim=)": lambda L: [(m(L) > 0).all(dim=1, keepdim=True), (m(L) > 0).any(dim=0)],
    "x.amax/amin(dim=, keepdim=)": lambda L: [m(L).amax(dim=1, keepdim=True), m(L).amin(dim=0)],
    "x.norm(p=, dim=, keepdim=, dtype=)": lambda L: m(L).norm(p=2, dim=1, keepdim=True, dtype=L.float64),
    "x.matmul(other=)": lambda L: sq(L).matmul(other=sq(L)),
    "x.mm(mat2=)": lambda L: sq(L).mm(mat2=sq(L)),
    "x.dot(tensor=)": lambda L: v(L).dot(tensor=v(L)),
    "x.addmm(mat1=, mat2=, beta=, alpha=)": lambda L: sq(L).addmm(mat1=sq(L), mat2=sq(L), beta=0.5, alpha=2),
    "x.reshape(shape=)": lambda L: m(L).reshape(shape=(3, 2)),
    "x.reshape(tuple)": lambda L: m(L).reshape((3, 2)),
    "x.view(tuple)": lambda L: m(L).view((6,)),
    "x.permute(dims=)": lambda L: m(L).permute(dims=(1, 0)),
    "x.permute(list)": lambda L: m(L).permute([1, 0]),
    "x.expand(size=)": lambda L: v(L).expand(size=(2, 3)),
    "x.expand(tuple)": lambda L: v(L).expand((2, 3)),
    "x.sum_to_size(size=)": lambda L: m(L).sum_to_size(size=(1, 3)),
    "x.transpose(dim0=, dim1=)": lambda L: m(L).transpose(dim0=1, dim1=0),
    "x.swapdims(dim0=, dim1=)": lambda L: m(L).swapdims(dim0=1, dim1=0),
    "x.swapaxes(axis0=, axis1=)": lambda L: m(L).swapaxes(axis0=1, axis1=0),
    "x.flatten(start_dim=, end_dim=)": lambda L: col(L).flatten(start_dim=0, end_dim=1),
    "x.squeeze(dim=)": lambda L: col(L).squeeze(dim=1),
    "x.squeeze(*dims)": lambda L: col(L).squeeze(0, 1),
    "x.unsqueeze(dim=)": lambda L: m(L).unsqueeze(dim=2),
    "x.narrow(dim=, start=, length=)": lambda L: m(L).narrow(dim=0, start=1, length=1),
    "x.select(dim=, index=)": lambda L: m(L).select(dim=0, index=1),
    "x.unbind(dim=)": lambda L: m(L).unbind(dim=1),
    "x.expand_as(other=)": lambda L: v(L).expand_as(other=m(L)),
    "x.view_as(other=)": lambda L: m(L).view_as(other=m(L).t()),
    "x.reshape_as(other=)": lambda L: m(L).reshape_as(other=m(L).t()),
    "x.type_as(other=)": lambda L: m(L).type_as(other=L.tensor([1])),
    "x.clone(memory_format=)": lambda L: m(L).clone(memory_format=L.preserve_format),
    "x.contiguous(memory_format=)": lambda L: m(L).t().contiguous(memory_format=L.contiguous_format),
    "x.is_contiguous(memory_format=)": lambda L: m(L).is_contiguous(memory_format=L.contiguous_format),
    "x.index_put(indices=, values=, accumulate=)":
        lambda L: v(L).index_put(indices=(L.tensor([1]),), values=L.tensor(5.0), accumulate=True),
    "x.index_put_(indices=, values=, accumulate=)":
        lambda L: v(L).index_put_(indices=(L.tensor([1]),), values=L.tensor(5.0), accumulate=False),
    "x.size(dim=)": lambda L: m(L).size(dim=1),
    "x.stride(dim=)": lambda L: m(L).stride(dim=0),
    "x.to(dtype=)": lambda L: m(L).to(dtype=L.float64),
    "x.to(device=, dtype=, non_blocking=, copy=, memory_format=)":
        lambda L: m(L).to(device="cpu", dtype=L.float64, non_blocking=False, copy=True,
                          memory_format=L.preserve_format),
    "x.to(tensor, non_blocking=, copy=)": lambda L: m(L).to(L.tensor([1]), non_blocking=False, copy=True),
    "x.type(dtype=, non_blocking=)": lambda L: m(L).type(dtype=L.float64, non_blocking=False),
    "x.float/double/int/long/half/bool(memory_format=)":
        lambda L: [getattr(m(L), c)(memory_format=L.preserve_format)
                   for c in ("float", "double", "int", "long", "half", "bool", "byte", "char", "short")],
    "x.new_tensor(data=, dtype=, requires_grad=)": lambda L: m(L).new_tensor(data=[1, 2], dtype=L.int64,
                                                                             requires_grad=False),
    "x.new_full(size=, fill_value=)": lambda L: m(L).new_full(size=(2,), fill_value=3.0),
    "x.new_zeros(size=)": lambda L: m(L).new_zeros(size=(2, 1)),
    "x.new_ones(size=, dtype=)": lambda L: m(L).new_ones(size=(2,), dtype=L.int32),
    "x.new_empty(size=)": lambda L: shape_of(m(L).new_empty(size=(2,))),
    "x.new_ones(tuple)": lambda L: m(L).new_ones((2, 2)),
    "x.fill_(value=)": lambda L: m(L).fill_(value=2.0),
    "x.copy_(other=, non_blocking=)": lambda L: m(L).copy_(other=m(L) * 2, non_blocking=False),
    "x.add_(other=, alpha=)": lambda L: m(L).add_(other=1.0, alpha=2),
    "x.sub_(other=, alpha=)": lambda L: m(L).sub_(other=1.0, alpha=2),
    "x.mul_(other=)": lambda L: m(L).mul_(other=2.0),
    "x.div_(other=, rounding_mode=)": lambda L: m(L).div_(other=2.0, rounding_mode="floor"),
    "x.pow_(exponent=)": lambda L: m(L).pow_(exponent=2),
    "x.clamp_(min=, max=)": lambda L: m(L).clamp_(min=-1.0, max=1.0),
    "x.clip_(min=, max=)": lambda L: m(L).clip_(min=-1.0, max=1.0),
    "x.clamp_min_(min=)": lambda L: m(L).clamp_min_(min=0.0),
    "x.clamp_max_(max=)": lambda L: m(L).clamp_max_(max=0.0),
    "x.round_(decimals=)": lambda L: m(L).round_(decimals=1),
    "x.uniform_(from=, to=)": lambda L: bool((m(L).uniform_(**{"from": 2.0, "to": 3.0}) >= 2).all()),
    "x.uniform_ positional": lambda L: bool((m(L).uniform_(2.0, 3.0) >= 2).all()),
    "x.normal_(mean=, std=, generator=)": lambda L: shape_of(m(L).normal_(mean=1.0, std=0.0, generator=None)),
    "x.requires_grad_(requires_grad=)": lambda L: m(L).requires_grad_(requires_grad=True).requires_grad,
    "x.requires_grad_(True) default": lambda L: m(L).requires_grad_().requires_grad,
    "x.numpy(force=)": lambda L: m(L).numpy(force=True),
    "x.register_hook(hook=)": lambda L: type(m(L).requires_grad_().register_hook(hook=lambda g: g)).__name__,
    "x.backward(gradient=, retain_graph=, create_graph=, inputs=)": lambda L: _backward_by_keyword(L),
    # ---- torch.nn.functional
    "F.linear(input=, weight=, bias=)": lambda L: L.nn.functional.linear(input=m(L), weight=m(L), bias=v(L)[:2]),
    "F.relu(input=, inplace=)": lambda L: L.nn.functional.relu(input=m(L), inplace=False),
    "F.sigmoid(input=)": lambda L: L.nn.functional.sigmoid(input=m(L)),
    "F.tanh(input=)": lambda L: L.nn.functional.tanh(input=m(L)),
    "F.mse_loss(input=, target=, reduction=)":
        lambda L: L.nn.functional.mse_loss(input=m(L), target=m(L) * 0, reduction="sum"),
    "F.mse_loss(weight=)": lambda L: L.nn.functional.mse_loss(m(L), m(L) * 0, weight=L.ones(2, 3)),
    # ---- torch.linalg
    "linalg.matmul(input=, other=)": lambda L: L.linalg.matmul(input=sq(L), other=sq(L)),
    "linalg.vector_norm(x=, ord=, dim=, keepdim=, dtype=)":
        lambda L: L.linalg.vector_norm(x=m(L), ord=1, dim=1, keepdim=True, dtype=L.float64),
    "linalg.vector_norm(input=) (NumPy-style alias)": lambda L: L.linalg.vector_norm(input=m(L)),
    "linalg.matrix_norm(input=, ord=, dim=, keepdim=, dtype=)":
        lambda L: L.linalg.matrix_norm(input=m(L), ord="fro", dim=(0, 1), keepdim=True, dtype=L.float64),
    "linalg.norm(input=, ord=, dim=, keepdim=, dtype=)":
        lambda L: L.linalg.norm(input=m(L), ord=2, dim=1, keepdim=False, dtype=L.float64),
    "linalg.svdvals(A=, driver=)": lambda L: L.linalg.svdvals(A=sq(L), driver=None),
    "linalg.vecdot(x=, y=, dim=)": lambda L: L.linalg.vecdot(x=m(L), y=m(L), dim=0),
    # ---- torch.nn.init
    "init.calculate_gain(nonlinearity=, param=)":
        lambda L: L.nn.init.calculate_gain(nonlinearity="leaky_relu", param=0.2),
    "init.constant_(tensor=, val=)": lambda L: L.nn.init.constant_(tensor=m(L), val=2.0),
    "init.zeros_/ones_/eye_(tensor=)":
        lambda L: [L.nn.init.zeros_(tensor=m(L)), L.nn.init.ones_(tensor=m(L)), L.nn.init.eye_(tensor=m(L))],
    "init.uniform_(tensor=, a=, b=, generator=)":
        lambda L: bool((L.nn.init.uniform_(tensor=m(L), a=2.0, b=3.0, generator=None) >= 2).all()),
    "init.normal_(tensor=, mean=, std=)": lambda L: L.nn.init.normal_(tensor=m(L), mean=1.0, std=0.0),
    "init.xavier_uniform_/normal_(tensor=, gain=)":
        lambda L: [shape_of(L.nn.init.xavier_uniform_(tensor=m(L), gain=2.0)),
                   shape_of(L.nn.init.xavier_normal_(tensor=m(L), gain=2.0, generator=None))],
    "init.kaiming_uniform_/normal_(tensor=, a=, mode=, nonlinearity=)":
        lambda L: [shape_of(L.nn.init.kaiming_uniform_(tensor=m(L), a=0.1, mode="fan_out", nonlinearity="relu")),
                   shape_of(L.nn.init.kaiming_normal_(tensor=m(L), a=0, mode="fan_in", nonlinearity="leaky_relu",
                                                      generator=None))],
    # ---- torch.autograd
    "autograd.grad(outputs=, inputs=, grad_outputs=, retain_graph=, create_graph=, allow_unused=)":
        lambda L: _grad_by_keyword(L),
    "autograd.backward(tensors=, grad_tensors=, inputs=)": lambda L: _autograd_backward_by_keyword(L),
    "autograd.gradcheck(func=, inputs=, eps=, atol=)":
        lambda L: L.autograd.gradcheck(func=L.sin if hasattr(L, "sin") else L.exp,
                                       inputs=(L.tensor([0.5], dtype=L.float64, requires_grad=True),),
                                       eps=1e-6, atol=1e-5),
}


def _backward_by_keyword(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.backward(gradient=L.ones(2), retain_graph=True, create_graph=False, inputs=[x])
    return x.grad


def _grad_by_keyword(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    return L.autograd.grad(outputs=(x * x).sum(), inputs=[x], grad_outputs=None, retain_graph=False,
                           create_graph=False, allow_unused=False)


def _autograd_backward_by_keyword(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    L.autograd.backward(tensors=[x * 3], grad_tensors=[L.ones(2)], inputs=[x])
    return x.grad


# (regex, program): the program must fail with a TypeError whose message matches the regex, in torch and in
# ember. The regex names the refused keyword, or the parameter torch reports missing in its place.
REFUSED = {
    # NumPy's names are not taken where torch's parser has none, nor the names ember uses inside
    "x.sum(keepdim=) without dim": ("keepdim", lambda L: m(L).sum(keepdim=True)),
    "sum(input, keepdim=) without dim": ("keepdim", lambda L: L.sum(m(L), keepdim=True)),
    "x.mean(keepdim=) without dim": ("keepdim", lambda L: m(L).mean(keepdim=True)),
    "x.swapaxes(dim0=)": ("dim0|axis0", lambda L: m(L).swapaxes(dim0=0, dim1=1)),
    "swapaxes(input, dim0=)": ("dim0|axis0", lambda L: L.swapaxes(m(L), dim0=0, dim1=1)),
    "linalg.matrix_norm(A=)": ("'A'|input", lambda L: L.linalg.matrix_norm(A=m(L))),
    "linalg.norm(A=)": ("'A'|input", lambda L: L.linalg.norm(A=m(L))),
    "linalg.vector_norm(A=)": ("'A'|input", lambda L: L.linalg.vector_norm(A=m(L))),
    "true_divide(rounding_mode=)": ("rounding_mode", lambda L: L.true_divide(m(L), 2.0, rounding_mode="floor")),
    "x.true_divide(rounding_mode=)": ("rounding_mode", lambda L: m(L).true_divide(2.0, rounding_mode="floor")),
    "x.add(out=)": ("out", lambda L: v(L).add(1.0, out=L.zeros(3))),
    "x.to(other=)": ("other", lambda L: m(L).to(other=L.tensor([1]))),
    "x.uniform_(from_=)": ("from_", lambda L: m(L).uniform_(from_=2.0, to=3.0)),
    "x.mul_(out=)": ("out", lambda L: m(L).mul_(2.0, out=m(L))),
    "x.reshape(sizes=)": ("sizes|shape", lambda L: m(L).reshape(sizes=(3, 2))),
    "x.view(shape=)": ("shape", lambda L: m(L).view(shape=(3, 2))),
    "x.expand(sizes=)": ("sizes|size", lambda L: v(L).expand(sizes=(2, 3))),
    "reshape(input, size=)": ("size|shape", lambda L: L.reshape(m(L), size=(3, 2))),
    "x.uniform_(a=)": ("a", lambda L: m(L).uniform_(a=0.0, b=1.0)),
    "x.copy_(src=)": ("src|other", lambda L: m(L).copy_(src=m(L))),
    "promote_types(a=)": ("a", lambda L: L.promote_types(a=L.float32, b=L.int64)),
    "x.squeeze(0, dim=)": ("dim", lambda L: col(L).squeeze(0, dim=1)),
    "result_type(tensor1=)": ("tensor1", lambda L: L.result_type(tensor1=m(L), tensor2=1)),
    "is_tensor(obj=)": ("obj", lambda L: L.is_tensor(obj=m(L))),
    "set_default_dtype(d=)": ("d", lambda L: L.set_default_dtype(d=L.float32)),
    "from_numpy(ndarray=)": ("keyword", lambda L: L.from_numpy(ndarray=np.zeros(2))),
    "set_rng_state(state=)": ("state", lambda L: L.set_rng_state(state=L.get_rng_state())),
    "x.requires_grad_(mode=)": ("mode", lambda L: m(L).requires_grad_(mode=True)),
    "x.dot(other=)": ("other|tensor", lambda L: v(L).dot(other=v(L))),
    "x.mm(other=)": ("other|mat2", lambda L: sq(L).mm(other=sq(L))),
    "x.narrow(dimension=)": ("dimension", lambda L: m(L).narrow(dimension=0, start=0, length=1)),
    "x.add(input=)": ("input|other", lambda L: m(L).add(input=m(L))),
    "x.abs(input=)": ("input|keyword", lambda L: m(L).abs(input=m(L))),
    "x.exp(out=)": ("out|keyword", lambda L: v(L).exp(out=v(L))),
    "x.sum(out=)": ("out", lambda L: m(L).sum(0, out=v(L))),
    "F.relu(x=)": ("x", lambda L: L.nn.functional.relu(x=m(L))),
    "init.uniform_(from_=)": ("from_", lambda L: L.nn.init.uniform_(m(L), from_=0.0)),
    "tensor(values=)": ("values|data", lambda L: L.tensor(values=[1.0])),
    "zeros(shape=)": ("shape|size", lambda L: L.zeros(shape=(2,))),
    "arange(stop=)": ("stop|end", lambda L: L.arange(stop=3)),
    "eye(N=)": ("N|n", lambda L: L.eye(N=2)),
    "linspace(num=)": ("num", lambda L: L.linspace(0.0, 1.0, num=3)),
    "full(fill=)": ("fill", lambda L: L.full((2,), fill=1.0)),
    "unbind(bogus=)": ("bogus", lambda L: L.unbind(m(L), bogus=0)),
    "F.mse_loss(reduce_mode=)": ("reduce_mode", lambda L: L.nn.functional.mse_loss(m(L), m(L), reduce_mode="sum")),
    "linalg.svdvals(input=)": ("input|A", lambda L: L.linalg.svdvals(input=sq(L))),
    "linalg.vecdot(input=)": ("input|x", lambda L: L.linalg.vecdot(input=m(L), y=m(L))),
    "linalg.vecdot(other=)": ("other|y", lambda L: L.linalg.vecdot(m(L), other=m(L))),
}

# keyword-only in torch: passing by position fails in both
POSITIONAL_REFUSED = {
    "add(input, other, alpha) by position": lambda L: L.add(m(L), m(L), 2),
    "sub(input, other, alpha) by position": lambda L: L.sub(m(L), m(L), 2),
    "div(input, other, rounding_mode) by position": lambda L: L.div(m(L), 2.0, "floor"),
    "x.div(other, rounding_mode) by position": lambda L: m(L).div(2.0, "floor"),
    "round(input, decimals) by position": lambda L: L.round(m(L), 1),
    "x.round(decimals) by position": lambda L: m(L).round(1),
    "clone(input, memory_format) by position": lambda L: L.clone(m(L), L.preserve_format),
    "sum(input, dim, keepdim, dtype) by position": lambda L: L.sum(m(L), 0, False, L.float64),
    "mean(input, dim, keepdim, dtype) by position": lambda L: L.mean(m(L), 0, False, L.float64),
    "x.mean(dim, keepdim, dtype) by position": lambda L: m(L).mean(0, False, L.float64),
    "cat(tensors, dim, out) by position": lambda L: L.cat([v(L)], 0, L.zeros(3)),
    "zeros_like(input, dtype) by position": lambda L: L.zeros_like(m(L), L.float64),
    "full(size, fill_value, dtype) by position": lambda L: L.full((2,), 1.0, L.float64),
    "linalg.vecdot(x, y, dim) by position": lambda L: L.linalg.vecdot(m(L), m(L), 0),
    "linalg.vector_norm(x, ord, dim, keepdim, dtype) by position":
        lambda L: L.linalg.vector_norm(m(L), 2, None, False, L.float64),
    "linalg.svdvals(A, driver) by position": lambda L: L.linalg.svdvals(sq(L), None),
    "addmm(input, mat1, mat2, beta) by position": lambda L: L.addmm(sq(L), sq(L), sq(L), 2),
    "x.normal_(mean, std, generator) by position": lambda L: m(L).normal_(0.0, 1.0, None),
    "x.numpy(force) by position": lambda L: m(L).numpy(True),
    "autograd.gradcheck(func, inputs, eps) by position": lambda L: L.autograd.gradcheck(L.exp, (v(L),), 1e-6),
    "as_tensor(data, dtype) by position": lambda L: L.as_tensor([1, 2], L.float64),
    "tensor(data, dtype) by position": lambda L: L.tensor([1.0], L.float64),
}


# Mismatches left, each with where the fix belongs (outside the files this sweep may change, or not yet done).
# strict: a case that starts passing fails here, so the entry is removed with the fix.
NOT_YET = {
    "x.add(out=)": "torch's methods take no out=; ember's share the function's implementation, and a method of "
                   "their own would cost each call",
    "x.sum(out=)": "as x.add(out=): the method shares sum's implementation, which takes out= for ember.sum",
    "x.exp(out=)": "as x.add(out=): the method shares exp's implementation, which takes out= for ember.exp",
    "x.uniform_(from_=)": "torch's keyword is 'from', which no Python parameter can be named: ember's is from_",
}


def _cases(table: dict) -> list:
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)), id=name,
                         marks=[pytest.mark.xfail(strict=True, reason=NOT_YET[name])] if name in NOT_YET else [])
            for name, case in table.items()]


@pytest.mark.parametrize("program", _cases(ACCEPTED))
def test_accepted(program):
    both(program, prepare=normalise)


@pytest.mark.parametrize("keyword, program", _cases(REFUSED))
def test_refused_keyword(keyword, program):
    both_raise(program, TypeError, keyword)


@pytest.mark.parametrize("program", _cases(POSITIONAL_REFUSED))
def test_keyword_only_refused_by_position(program):
    both_raise(program, TypeError)
