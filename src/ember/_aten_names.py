"""``ember.ops.aten``: ember's built-in ops under torch's ATen names, for code that picks ops by name.

A built-in op's name is the one its graph node is named after, as torch names its nodes after its ATen ops
(``MmBackward0`` is ``aten.mm``). Selective activation checkpointing hands these names to its policies. They
name ops and are compared, hashed and printed as torch's are; ember's ops are called through ``ember``'s
functions, not through them.

>>> print(ember.ops.aten.mm.default)
aten.mm.default
>>> ember.ops.aten.mul.Tensor, ember.ops.aten.mul.Tensor is ember.ops.aten.mul.Tensor
(<OpOverload(op='aten.mul', overload='Tensor')>, True)
>>> aten_name("NativeLayerNormBackward0"), aten_name("Log1PBackward0"), aten_name("UnsafeViewBackward0")
('native_layer_norm', 'log1p', '_unsafe_view')
"""
from __future__ import annotations

import re

# torch's node names drop the leading underscore of the ATen ops below (its _unsafe_view makes UnsafeViewBackward0)
_UNDERSCORED = frozenset({
    "ctc_loss_backward", "euclidean_dist", "fake_quantize_learnable_per_channel_affine",
    "fake_quantize_learnable_per_tensor_affine", "fake_quantize_per_tensor_affine_cachemask_tensor_qparams",
    "fused_moving_avg_obs_fq_helper", "log_softmax", "pack_padded_sequence", "reshape_alias", "softmax",
    "sparse_addmm", "sparse_coo_tensor_with_dims_and_tensors", "sparse_mm_reduce_impl", "to_copy", "unsafe_view",
})
_FORWARD_OPS = {"nll_loss": "nll_loss_forward", "nll_loss2d": "nll_loss2d_forward"}  # (their node is NllLoss...)
# The overload each node records where it is not "default": torch numbers a name's nodes in the order of its
# derivative formulas (MulBackward0 for mul.Tensor, MulBackward1 for mul.Scalar)
_OVERLOADS = {
    "AddBackward0": "Tensor", "AddBackward1": "Scalar", "SubBackward0": "Tensor", "SubBackward1": "Scalar",
    "MulBackward0": "Tensor", "MulBackward1": "Scalar", "DivBackward0": "Tensor", "DivBackward1": "Scalar",
    "DivBackward2": "Tensor_mode", "DivBackward3": "Scalar_mode", "PowBackward0": "Tensor_Scalar",
    "PowBackward1": "Tensor_Tensor", "PowBackward2": "Scalar", "SumBackward1": "dim_IntList", "MeanBackward1": "dim",
    "ProdBackward1": "dim_int", "MaxBackward0": "dim", "MinBackward0": "dim", "VarBackward0": "correction",
    "StdBackward0": "correction", "TransposeBackward0": "int", "SelectBackward0": "int", "SliceBackward0": "Tensor",
    "SplitBackward0": "Tensor", "UnbindBackward0": "int", "SqueezeBackward1": "dim", "SqueezeBackward2": "dims",
    "IndexBackward0": "Tensor", "WhereBackward0": "self", "MaskedFillBackward0": "Scalar",
    "MaskedFillBackward1": "Tensor", "ClampBackward0": "Tensor",
}

_known: dict[str, set[str]] = {}  # name -> overloads of ember's built-in ops, noted as Function defines each
_packets: dict[str, "AtenPacket"] = {}
_by_node: dict[str, "AtenOverload"] = {}  # node name -> the overload it records, as each is first asked for


def aten_name(node_name: str) -> str:
    """The ATen op a node of this name records: its name without ``Backward<n>``, from CamelCase to snake_case
    (an uppercase letter after a digit stays in its word, as in ``Log1P`` or ``AvgPool2D``)."""
    base = re.sub(r"Backwards?\d*$", "", node_name)
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", base).lower()
    return "_" + name if name in _UNDERSCORED else _FORWARD_OPS.get(name, name)


def note_builtin(node_name: str) -> None:
    """Make the op behind a built-in node of this name reachable as ``ember.ops.aten.<name>.<overload>``."""
    _known.setdefault(aten_name(node_name), {"default"}).add(_OVERLOADS.get(node_name, "default"))


class AtenOverload:
    """One overload of a built-in op (``aten.mm.default``); there is one object per overload."""

    __slots__ = ("packet", "_overloadname")

    def __init__(self, packet: "AtenPacket", overload: str):
        self.packet, self._overloadname = packet, overload

    @property
    def overloadpacket(self) -> "AtenPacket":
        return self.packet

    @property
    def __name__(self) -> str:
        return f"{self.packet._name}.{self._overloadname}"

    def name(self) -> str:
        """``"aten::mm"`` (with ``.overload`` for one other than the default), as torch's ``OpOverload.name()``."""
        suffix = "" if self._overloadname == "default" else f".{self._overloadname}"
        return f"aten::{self.packet._name}{suffix}"

    def __str__(self) -> str:
        return f"aten.{self.__name__}"

    def __repr__(self) -> str:
        return f"<OpOverload(op='aten.{self.packet._name}', overload='{self._overloadname}')>"


class AtenPacket:
    """A built-in op by name (``aten.mm``); its overload is an attribute (``aten.mm.default``)."""

    __slots__ = ("_name", "_overloads")

    def __init__(self, name: str, overloads: set):
        self._name = name
        self._overloads = {overload: AtenOverload(self, overload) for overload in sorted(overloads)}

    @property
    def __name__(self) -> str:
        return self._name

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __getattr__(self, overload: str) -> AtenOverload:
        found = self._overloads.get(overload)
        if found is None:
            raise AttributeError(f"The underlying op of 'aten.{self._name}' has no overload name '{overload}'")
        return found

    def __str__(self) -> str:
        return f"aten.{self._name}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self._name}')>"


def packet(name: str) -> AtenPacket | None:
    """``ember.ops.aten.<name>``, or None if no built-in op has that name."""
    if name not in _known:
        return None
    found = _packets.get(name)
    if found is None:
        found = _packets[name] = AtenPacket(name, _known[name])
    for overload in _known[name] - found._overloads.keys():  # (an op of that name defined since)
        found._overloads[overload] = AtenOverload(found, overload)
    return found


def op_of_node(node_name: str) -> AtenOverload:
    """The overload a built-in op whose node has this name runs, as policies are given it."""
    found = _by_node.get(node_name)
    if found is None:
        found = _by_node[node_name] = getattr(packet(aten_name(node_name)), _OVERLOADS.get(node_name, "default"))
    return found
