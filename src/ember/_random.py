"""Random number generation: ``Generator``, ``manual_seed`` and the default generator.

>>> import ember
>>> _ = ember.manual_seed(0); a = ember.rand(2)
>>> _ = ember.manual_seed(0); b = ember.rand(2)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import numpy as np


_UNSIGNED_64 = 0xFFFFFFFFFFFFFFFF


def _seed_value(seed: int) -> int:
    """A seed as torch stores it: any 64-bit integer, negative ones read as unsigned (-1 is 2**64 - 1)."""
    if not -2 ** 63 <= seed <= _UNSIGNED_64:
        raise ValueError(f"manual_seed: Overflow when unpacking long long: the seed {seed} does not fit in 64 bits")
    return seed & _UNSIGNED_64


class Generator:
    """A source of random numbers with its own state: torch's CPU generator, a 32-bit Mersenne Twister
    (mt19937) seeded as torch seeds it, so that a seed gives torch's numbers (``_streams`` draws them)."""

    def __init__(self, device="cpu"):
        from ember._tensor import device as _device

        _device(device)  # only the CPU has generators
        self._bits = np.random.MT19937(0)
        self._rng = np.random.Generator(self._bits)  # NumPy's samplers, on the same stream, for the rest
        self.manual_seed(67280421310721)

    def manual_seed(self, seed: int) -> "Generator":
        if not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        self._seed = _seed_value(int(seed))
        self._seeded_key = _mt_key(self._seed)
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": self._seeded_key, "pos": _MT_WORDS}}
        self._normal = None  # the second of a pair of normals drawn one at a time, kept for the next draw
        return self

    def seed(self) -> int:
        seed = int(np.random.SeedSequence().entropy) & _UNSIGNED_64
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor laid out as torch's, byte for byte: a state saved by either library
        restores in the other."""
        from ember._ops._support import wrap

        state = self._bits.state["state"]
        position = int(state["pos"])
        record = np.zeros((), _TORCH_STATE)
        twister = record["twister"]
        twister["seed"], twister["seeded"], twister["words"] = self._seed, 1, state["key"]
        # torch counts the words left plus one, and just after seeding reads from word 0 once it has twisted
        twister["left"] = _MT_WORDS + 1 - position
        twister["next"] = 0 if position == _MT_WORDS and np.array_equal(state["key"], self._seeded_key) else position
        if self._normal is not None:
            twister["normal_y"], twister["normal_is_valid"] = self._normal, 1
        return wrap(np.frombuffer(record.tobytes(), np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        from ember._tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a ByteTensor (uint8) as the state, but got {type(new_state).__name__}")
        data = new_state._data
        if data.dtype != np.uint8:
            raise TypeError(f"RNG state must be a ByteTensor (uint8), got one of {new_state.dtype}; "
                            "pass a state from get_state()")
        if data.shape == (_OLD_STATE_BYTES,):
            return self._set_old_state(np.ascontiguousarray(data))
        if data.shape != (_TORCH_STATE.itemsize,):
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_TORCH_STATE.itemsize} but found the "
                               f"input RNG state size to be {data.size}; pass a state from get_state()")
        # read as numbers only: a state never runs code
        twister = np.frombuffer(np.ascontiguousarray(data).tobytes(), _TORCH_STATE)[0]["twister"]
        left = int(twister["left"])
        if not 1 <= left <= _MT_WORDS or twister["seeded"] != 1:
            raise RuntimeError(f"Invalid mt19937 state: {left} words left of {_MT_WORDS}, seeded flag "
                               f"{int(twister['seeded'])} (expected 1 to {_MT_WORDS}, and 1)")
        key = twister["words"].astype(np.uint32)
        # a state just seeded (its words not yet twisted) gives itself back from get_state as it came
        self._seeded_key = key if left == 1 and twister["next"] == 0 else None
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _MT_WORDS + 1 - left}}
        self._seed = int(twister["seed"])
        self._normal = float(twister["normal_y"]) if twister["normal_is_valid"] else None
        return self

    def _set_old_state(self, raw: np.ndarray) -> "Generator":
        """A state in the layout ember's get_state gave before it took torch's (the twister's words and
        position, the seed, the kept normal or NaN), so that checkpoints saved then still load."""
        key = raw[:4 * _MT_WORDS].view("<u4").astype(np.uint32)
        position, = raw[4 * _MT_WORDS:4 * _MT_WORDS + 4].view("<u4")
        if position > _MT_WORDS:
            raise RuntimeError(f"Invalid mt19937 state: its position {position} is past the {_MT_WORDS} words")
        seed, = raw[4 * _MT_WORDS + 4:4 * _MT_WORDS + 12].view("<u8")
        kept, = raw[4 * _MT_WORDS + 12:].view("<f8")
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": int(position)}}
        self._seed, self._normal, self._seeded_key = int(seed), None if np.isnan(kept) else float(kept), None
        return self

    def clone_state(self) -> "Generator":
        """A new generator in the same state: it draws the same numbers as this one from here on."""
        twin = Generator()
        twin.set_state(self.get_state())
        return twin

    @property
    def device(self):
        from ember._tensor import device

        return device("cpu")


_MT_WORDS = 624
_OLD_STATE_BYTES = 4 * _MT_WORDS + 4 + 8 + 8
_TORCH_STATE = np.dtype([
    ("twister", np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                          ("words", "<u8", (_MT_WORDS,)), ("normal_x", "<f8"), ("normal_y", "<f8"),
                          ("normal_rho", "<f8"), ("normal_is_valid", "<i4")], align=True)),
    ("float_normal", "<f4"), ("float_normal_is_valid", "u1")], align=True)
"""torch's CPU generator state as C lays it out: the legacy twister record (the words widened to 64 bits; the
normal kept by a double draw in ``normal_y``), then a single-precision normal, which ember's draws never keep."""


def _mt_key(seed: int) -> np.ndarray:
    """The twister's words for ``seed`` (its low 32 bits, as torch's mt19937 takes it): the reference
    initialisation, each word from the one before."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, _MT_WORDS):
        previous = key[-1]
        key.append((1812433253 * (previous ^ (previous >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, np.uint32)


default_generator = Generator()


def generator(g: Generator | None) -> np.random.Generator:
    """NumPy's samplers on the stream of ``g``, or of the default generator (for the distributions that
    ``_streams`` does not draw as torch does)."""
    return (g if g is not None else default_generator)._rng


def chosen(g: Generator | None) -> Generator:
    """``g``, or the default generator."""
    return g if g is not None else default_generator


def manual_seed(seed: int) -> Generator:
    """Seed the default generator, for reproducible results (a float is truncated, as ``int`` does)."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)
