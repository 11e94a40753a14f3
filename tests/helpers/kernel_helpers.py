"""A real Jupyter kernel for tests: started on this interpreter, cells run, leftovers watched.

:class:`Kernel` starts an ipykernel with ``sys.executable`` (a kernel spec of its own, in a
temporary directory, so no ``python3`` spec installed elsewhere is picked), runs cells and
collects what they print and raise. A cell hands data back by printing one JSON line
tagged ``@@name``. :class:`Watch` polls a set of processes and shared-memory segments from
a thread, so the moment each disappears is known even while a blocking call runs.
"""

from __future__ import annotations

import json
import os
import secrets
import string
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.processes import pid_alive

REPO = Path(__file__).resolve().parents[2]
SHM = Path("/dev/shm")
KERNEL_NAME = "plangym-test-python"
POLL_S = 0.01


def shm_prefix() -> str:
    """A shared-memory name prefix no segment in /dev/shm has yet, for one kernel.

    ``psm_k`` and four letters past ``f``: default names continue ``psm_`` with hex digits.
    multiprocessing wants 2 random bytes after the prefix within its 14 characters.
    """
    while True:
        prefix = "psm_k" + "".join(secrets.choice(string.ascii_lowercase[6:]) for _ in range(4))
        if not any(SHM.glob(prefix + "*")):
            return prefix


def set_prefix_code(prefix: str) -> str:
    """Kernel code: name every segment this kernel creates with ``prefix``."""
    return (
        "from multiprocessing import shared_memory as _shm\n"
        f"_shm._SHM_NAME_PREFIX = '/' + {prefix!r}\n"
    )


# Kernel code: the shared-memory segments this process maps (removed ones excluded).
MAPPED_SEGMENTS_CODE = """
def mapped_segments():
    names = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) == 6 and parts[5].startswith("/dev/shm/psm_"):
                names.add(parts[5][len("/dev/shm/"):])
    return sorted(names)
"""


def segments_left(prefix: str) -> list[str]:
    """Segments in /dev/shm named with ``prefix``."""
    return sorted(path.name for path in SHM.glob(prefix + "*"))


def remove_segments(names: list[str]) -> None:
    """Unlink segments a test found leaked, so that they do not fill /dev/shm."""
    for name in names:
        Path(SHM, name).unlink(missing_ok=True)


def children_of(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (read from /proc)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if pid_alive(child):
                found.append(child)
                todo.append(child)
    return sorted(found)


@dataclass
class Cell:
    """What one executed cell produced."""

    code: str
    status: str = ""  # the execute_reply's: "ok", "error" or "aborted"
    stdout: str = ""
    stderr: str = ""
    error: dict | None = None  # ename, evalue, traceback
    error_at: float | None = None  # time.monotonic() when the error message arrived
    reply_at: float | None = None  # ... and when the execute_reply did

    def describe(self) -> str:
        """The cell's output and error, for assertion messages."""
        text = f"status={self.status}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"
        if self.error:
            text += "\n" + "\n".join(self.error.get("traceback", []))
        return text

    def ok(self) -> Cell:
        """Return this cell, asserting that it ran without error."""
        assert self.status == "ok", self.describe()
        return self

    def value(self, tag: str) -> Any:
        """The JSON value the cell printed on a line ``@@tag <json>``."""
        for line in self.stdout.splitlines():
            if line.startswith(f"@@{tag} "):
                return json.loads(line[len(tag) + 3 :])
        raise AssertionError(f"no @@{tag} line in the output:\n{self.describe()}")


class Kernel:
    """An ipykernel on this interpreter with a blocking client.

    Args:
        workdir: A directory for the kernel spec and the kernel's own stdout/stderr.
        startup_timeout: Seconds to wait for the kernel to answer.
    """

    def __init__(self, workdir: Path, startup_timeout: float = 60.0):
        # Imported here: pytest's doctest collection imports this module without them.
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpecManager

        spec_dir = workdir / "kernels" / KERNEL_NAME
        spec_dir.mkdir(parents=True)
        spec = {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "plangym tests",
            "language": "python",
            "interrupt_mode": "signal",
        }
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
        self.startup_timeout = startup_timeout
        self.log_path = workdir / "kernel.log"
        self._log = self.log_path.open("w")
        self.km = KernelManager(
            kernel_name=KERNEL_NAME,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec_dir.parent)]),
        )
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.km.start_kernel(stdout=self._log, stderr=self._log, cwd=str(REPO), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        try:
            self.kc.wait_for_ready(timeout=startup_timeout)
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        """Process id of the running kernel."""
        return self.km.provisioner.pid

    def log(self) -> str:
        """What the kernel process wrote to its own stdout/stderr (not a cell's output)."""
        self._log.flush()
        return self.log_path.read_text()

    # Cells ------------------------------------------------------------------------------------
    def submit(self, code: str) -> str:
        """Start running ``code``; return the message id :meth:`collect` waits for."""
        return self.kc.execute(code, store_history=False, allow_stdin=False)

    def collect(self, msg_id: str, code: str = "", timeout: float = 120.0) -> Cell:
        """Gather the output of cell ``msg_id`` until the kernel is idle and has replied."""
        cell, deadline = Cell(code), time.monotonic() + timeout
        while True:
            msg = self.kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                if content["name"] == "stdout":
                    cell.stdout += content["text"]
                else:
                    cell.stderr += content["text"]
            elif kind == "error":
                cell.error, cell.error_at = content, time.monotonic()
            elif kind == "status" and content["execution_state"] == "idle":
                break
        while True:
            reply = self.kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
            if reply["parent_header"].get("msg_id") == msg_id:
                cell.status, cell.reply_at = reply["content"]["status"], time.monotonic()
                return cell

    def run(self, code: str, timeout: float = 120.0) -> Cell:
        """Run ``code`` and return what it produced."""
        return self.collect(self.submit(code), code, timeout)

    # Life cycle -------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the client and kill whatever kernel still runs; idempotent."""
        if self.kc is not None:
            self.kc.stop_channels()
            self.kc = None
        if self.km.has_kernel:
            self.km.shutdown_kernel(now=True)
        self.km.cleanup_resources()
        self._log.close()


@dataclass
class Watch:
    """Polls processes and segments from a thread; records when each is first seen gone.

    Times are seconds since :meth:`start`. A segment can only be removed by a live
    process, so once every process watched is gone the segments left stay left.
    """

    pids: dict[str, int]
    segments: list[str]
    gone: dict[str, float] = field(default_factory=dict)
    started: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Watch:
        """Start polling."""
        self.started = time.monotonic()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def elapsed(self) -> float:
        """Seconds since :meth:`start`."""
        return time.monotonic() - self.started

    def _poll(self) -> None:
        while not self._stop.is_set():
            self._check()
            if self.done():
                return
            time.sleep(POLL_S)

    def _check(self) -> None:
        for label, pid in self.pids.items():
            if label not in self.gone and not pid_alive(pid):
                self.gone[label] = self.elapsed()
        for name in self.segments:
            if name not in self.gone and not Path(SHM, name).exists():
                self.gone[name] = self.elapsed()

    def processes_gone(self) -> bool:
        """Whether every process watched is gone."""
        return all(label in self.gone for label in self.pids)

    def done(self) -> bool:
        """Whether there is nothing left to wait for (see the class docstring)."""
        segments_gone = all(name in self.gone for name in self.segments)
        return self.processes_gone() and (segments_gone or self._settled())

    def _settled(self) -> bool:
        # Every process was seen gone before this check of the segments: none can change.
        return bool(self.pids) and max(self.gone[label] for label in self.pids) < self.elapsed()

    def wait(self, timeout: float) -> Watch:
        """Wait until :meth:`done` or ``timeout`` seconds after :meth:`start`; stop polling."""
        self._thread.join(max(self.started + timeout - time.monotonic(), 0.0))
        self._stop.set()
        self._thread.join()
        self._check()
        return self

    def alive(self) -> dict[str, int]:
        """The processes watched that were never seen gone."""
        return {label: pid for label, pid in self.pids.items() if label not in self.gone}

    def left(self) -> list[str]:
        """The segments watched that still exist."""
        return [name for name in self.segments if name not in self.gone]

    def last_gone(self, labels: list[str]) -> float | None:
        """When the last of ``labels`` went (None: some did not, or there are none)."""
        if not labels or any(label not in self.gone for label in labels):
            return None
        return max(self.gone[label] for label in labels)
