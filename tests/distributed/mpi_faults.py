"""Run under mpiexec by test_mpi.py, in one of several modes, to show how a job fails (or, launched, what it sees)."""
import os
import sys
import time
from datetime import timedelta


def main(mode):
    import ember
    import ember.distributed as dist

    dist.init_process_group("mpi", timeout=timedelta(seconds=2))
    rank = dist.get_rank()
    if mode == "raise":  # rank 1 fails while rank 0 waits in a collective for it
        if rank == 1:
            raise ValueError("the data file is corrupt")
        dist.all_reduce(ember.ones(3))
    elif mode == "timeout":  # rank 1 never joins the collective: rank 0 gives up after the timeout
        if rank == 1:
            time.sleep(60)
        dist.all_reduce(ember.ones(3))
    elif mode == "mismatch":
        dist.all_reduce(ember.ones(3 + rank))
    elif mode == "environment":
        print(f"RANK={os.environ['RANK']} WORLD_SIZE={os.environ['WORLD_SIZE']} "
              f"LOCAL_RANK={os.environ['LOCAL_RANK']} args={sys.argv[1:]} rank={rank}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
