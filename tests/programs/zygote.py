"""Program runs forked from an interpreter that has already imported its library.

``python tests/programs/zygote.py torch|ember IMPORT_DIR`` imports torch (or, for ``ember``, installs
as_ember.py's hook and imports ember as ``torch``) once, with ``IMPORT_DIR`` as ``sys.path[0]``, then forks one
child per program run. The corpus runs every program twice; a new interpreter pays torch's import (about two
seconds of CPU) or ember's (about one) each time, a forked child pays neither.

A child sees what a new interpreter running ``python PROGRAM ARGS`` (or ``as_ember.py PROGRAM ARGS``) sees: its
own pid, ``sys.argv``, ``sys.path[0]`` the program's directory, the requested working directory, standard input
from /dev/null, standard output and error in the requested files, the program as ``__main__``, and the exit
status a plain run has (0, a ``SystemExit`` code, 1 with the traceback on an uncaught exception, atexit handlers
run). The one thing it shares is the library already in ``sys.modules``, as a plain run has it after its
``import torch``. That holds because the zygote runs no torch op before it forks: it has no OpenMP pool or other
thread, whose state a fork would copy half-made. (Also shared: the string hash seed; no program may depend on it.)

The test talks to a zygote through :class:`Zygote`: one JSON object per line on the zygote's standard input
(``{"argv", "cwd", "stdout", "stderr", "env"}``), answered on its standard output with ``{"pid": N}`` once the child
runs and ``{"status": CODE}`` when it has ended, CODE as ``Popen.returncode`` gives it (negative for a signal).
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
LIBRARIES = ("torch", "ember")


# ---- the zygote process

def take_the_protocol_channel():
    """Keep stdin and stdout for the protocol and point fds 0 and 1 elsewhere, so that nothing the library or a
    child prints can reach the test's pipe: fd 0 reads /dev/null and fd 1 writes where stderr (the log) goes."""
    requests = os.fdopen(os.dup(0), "r")
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    redirect(0, os.devnull, os.O_RDONLY)
    os.dup2(2, 1)
    return requests, replies


def redirect(fd: int, path: str, flags: int) -> None:
    opened = os.open(path, flags, 0o644)
    os.dup2(opened, fd)
    os.close(opened)


def import_library(library: str, import_dir: str) -> None:
    import as_ember  # beside this file, which is sys.path[0] until the next line

    sys.path[0] = import_dir  # where a plain run of a program imports the library from
    if library == "ember":
        as_ember.install()
    import torch  # noqa: F401  (ember's modules under the hook)


def threads_now() -> int:
    return len(os.listdir("/proc/self/task"))


def serve(requests, replies) -> dict | None:
    """Fork a child per request until the test closes the pipe. Returns only in a child, with its request."""
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()  # or a child would print what its parent had buffered
        pid = os.fork()
        if pid == 0:
            return request
        print(json.dumps({"pid": pid}), file=replies)
        _, wait_status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(wait_status)}), file=replies)
    return None


def become_the_run(request: dict, requests, replies) -> None:
    """Turn this forked child into the program's process, then run the program as ``__main__``. Whatever the
    program raises goes up to the interpreter, which reports and exits as it would for a plain run."""
    requests.close()
    replies.close()
    os.chdir(request["cwd"])
    redirect(1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    redirect(2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.environ.clear()
    os.environ.update(request["env"])  # the run's own, PYTEST_CURRENT_TEST included
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # NumPy's global stream is seeded once at import; a new process would draw anew
    sys.modules["as_ember"].run_as_main(request["argv"])


def main(library: str, import_dir: str) -> None:
    requests, replies = take_the_protocol_channel()
    import_library(library, import_dir)
    threads = threads_now()
    if threads != 1:
        print(json.dumps({"ready": False, "why": f"importing {library} left {threads} threads running: a fork "
                                                  "would copy their state half-made"}), file=replies)
        return
    print(json.dumps({"ready": True}), file=replies)
    request = serve(requests, replies)
    if request is not None:
        become_the_run(request, requests, replies)


# ---- the test's side

class Zygote:
    """One library's zygote, started on the first run and again whenever the environment to run in changes.
    tests/programs/test_zygote.py shows it in use."""

    def __init__(self, library: str, import_dir: str, env: dict[str, str]):
        if library not in LIBRARIES:
            raise ValueError(f"Zygote: library must be one of {LIBRARIES}, got {library!r}")
        self.library, self.import_dir, self.env = library, import_dir, env
        self.process: subprocess.Popen | None = None
        self.captures = tempfile.mkdtemp(prefix=f"zygote-{library}-")
        self.pending = b""  # bytes of replies read but not yet parsed

    def run(self, argv: list[str], cwd: str | Path, timeout: float,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run ``python *argv`` in a forked child, as ``subprocess.run(..., capture_output=True, text=True,
        timeout=timeout)`` would in a new interpreter; raises ``subprocess.TimeoutExpired`` as it does."""
        deadline = time.monotonic() + timeout
        env = env if env is not None else self.env
        self.start_if_needed(env, deadline)
        stdout, stderr = os.path.join(self.captures, "stdout"), os.path.join(self.captures, "stderr")
        for capture in (stdout, stderr):
            if os.path.exists(capture):
                os.remove(capture)  # a child that dies before it opens its own must not show the last run's
        request = {"argv": [str(a) for a in argv], "cwd": str(cwd), "stdout": stdout, "stderr": stderr, "env": env}
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        pid = self.reply(deadline)["pid"]
        try:
            status = self.reply(deadline)["status"]
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)  # as subprocess.run kills its child
            self.reply(None)
            raise subprocess.TimeoutExpired([sys.executable, *argv], timeout, read_text(stdout), read_text(stderr))
        return subprocess.CompletedProcess([sys.executable, *argv], status, read_text(stdout), read_text(stderr))

    def start_if_needed(self, env: dict[str, str], deadline: float) -> None:
        if self.process is not None and self.process.poll() is None and at_start_up(env) == at_start_up(self.env):
            return
        self.stop()
        self.env = env
        self.log = open(os.path.join(self.captures, "log"), "w+b")
        self.process = subprocess.Popen([sys.executable, str(HERE), self.library, self.import_dir], env=env,
                                        cwd=self.captures, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, bufsize=0)
        self.pending = b""
        ready = self.reply(deadline)
        if not ready["ready"]:
            raise RuntimeError(f"the {self.library} zygote cannot fork program runs safely: {ready['why']}; "
                               "set EMBER_CORPUS_FORK=0 to run every program in a new interpreter")

    def reply(self, deadline: float | None) -> dict:
        """The zygote's next reply; ``TimeoutExpired`` once ``deadline`` (``time.monotonic()``) has passed."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], left)[0]:
                raise subprocess.TimeoutExpired(self.process.args, left)
            chunk = os.read(fd, 4096)
            if not chunk:
                self.log.seek(0)
                raise RuntimeError(f"the {self.library} zygote exited with {self.process.wait()}:\n"
                                   + self.log.read().decode(errors="replace"))
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.stdin.close()
        self.process.kill()  # between runs it holds nothing worth an orderly exit, which costs torch a second
        self.process.wait()
        self.process.stdout.close()
        self.log.close()
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.captures, ignore_errors=True)


# Variables that a child takes from its request, with no new zygote: pytest sets this one anew for every test, and
# nothing reads it at start-up. Any other difference may change how the library imports: a new zygote.
PER_RUN_VARIABLES = frozenset({"PYTEST_CURRENT_TEST"})


def at_start_up(env: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items() if name not in PER_RUN_VARIABLES}


def read_text(path: str) -> str:
    """A capture decoded as ``subprocess.run(..., text=True)`` decodes: the locale's encoding, universal newlines."""
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        return ""


if __name__ == "__main__":
    main(*sys.argv[1:])
