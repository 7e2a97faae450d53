"""For the programs run under mpiexec: ember's default group on MPI and torch's on gloo, side by side."""
import contextlib
import sys


@contextlib.contextmanager
def ember_and_torch_worlds():
    """Both process groups over the same ranks (torch's through the file store named in argv[1])."""
    import torch
    import torch.distributed as tdist

    import ember
    import ember.distributed as edist

    edist.init_process_group("mpi")
    tdist.init_process_group("gloo", init_method=f"file://{sys.argv[1]}", rank=edist.get_rank(),
                             world_size=edist.get_world_size())
    yield ember, torch
    tdist.destroy_process_group()
    edist.destroy_process_group()
