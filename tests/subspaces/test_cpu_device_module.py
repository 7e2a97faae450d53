"""ember.cpu's streams, events and capabilities against torch.cpu's."""
import pytest
import torch

import ember


def test_capabilities_are_torchs_on_this_machine():
    # both describe the same CPU: every key, every flag, the cache sizes and core counts alike
    assert dict(ember.cpu.get_capabilities()) == dict(torch.cpu.get_capabilities())


def test_capabilities_are_read_only_as_torchs():
    mine, theirs = ember.cpu.get_capabilities(), torch.cpu.get_capabilities()
    assert type(mine) is type(theirs)
    for caps in (mine, theirs):
        with pytest.raises(TypeError):
            caps["avx2"] = False


def test_public_names_as_torch():
    assert set(torch.cpu.__all__) <= set(ember.cpu.__all__)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_stream_context_sets_and_restores(lib):
    default = lib.cpu.current_stream()
    side, inner = lib.cpu.Stream(), lib.cpu.Stream(priority=0)
    with lib.cpu.stream(side) as entered:
        assert entered is None and lib.cpu.current_stream() is side
        with lib.cpu.StreamContext(inner):
            assert lib.cpu.current_stream() is inner
        assert lib.cpu.current_stream() is side
        with lib.cpu.stream(None):  # None keeps the current stream
            assert lib.cpu.current_stream() is side
    assert lib.cpu.current_stream() is default
    assert lib.cpu.current_stream(device="cpu") is default


def test_stream_and_event_answer_as_torchs():
    for lib in (torch, ember):
        stream, event = lib.cpu.Stream(), lib.cpu.Event()
        answers = (stream.wait_stream(lib.cpu.Stream()), stream.record_event(), stream.wait_event(event),
                   event.query(), event.record(), event.record(stream), event.synchronize(), event.wait())
        assert answers == (None, None, None, True, None, None, None, None)
