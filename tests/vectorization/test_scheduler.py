"""The Scheduler against a fake backend: order, re-runs, stale replies, timeouts, policies.

The fake's workers live in memory: a request is queued at its worker when submitted and
answered when the scheduler reads it. Scripted faults make a request hang, kill its
worker or raise the env's error; the order in which ready workers are reported is chosen
by each test, so the scheduler sees workers answer out of order. No processes, no threads.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from plangym.vectorization.backend import STALE, Backend, BatchInputs, ChunkResult
from plangym.vectorization.errors import (
    CallTimeoutError,
    SubEnvCrashedError,
    WorkerCrashedError,
)
from plangym.vectorization.messages import SetAttr
from plangym.vectorization.replacement import ABANDONED
from plangym.vectorization.scheduler import (
    MAX_RERUNS,
    Batch,
    OnCrash,
    Scheduler,
    plan_chunks,
)

Fault = Literal["die", "error", "hang", "dead_on_submit"]
Order = Callable[[list[int]], list[int]]


# Requests -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Chunk:
    """The fake's StepChunk: elements ``start:stop`` of a batch."""

    index: int
    start: int
    stop: int
    actions: tuple[Any, ...]
    want_state: bool


@dataclass(frozen=True)
class Call:
    """A whole-env request (a reset, a get_attr...)."""

    name: str


@dataclass(frozen=True)
class Recover:
    """The recovery request a replaced worker runs first."""


@dataclass
class Entry:
    """A request queued at a fake worker."""

    ticket: int
    request: Any
    fault: Fault | None


# What the fake's workers compute --------------------------------------------------------------
def element_row(index: int, action: Any, want_state: bool) -> list[Any]:
    """The step_batch columns of one element: all of them tell which element it was."""
    row = [("obs", index, action), float(index), index % 7 == 0, index % 11 == 0, {"i": index}]
    return [("state", index), *row] if want_state else row


def transpose(rows: list[list[Any]]) -> list[list[Any]]:
    return [list(column) for column in zip(*rows, strict=True)]


def expected_columns(inputs: BatchInputs) -> tuple[list, ...]:
    rows = [element_row(i, inputs.actions[i], inputs.want_state) for i in range(len(inputs))]
    return tuple(transpose(rows))


def make_inputs(n: int, states: bool = True, want_state: bool = True, seed: int = 0):
    actions = [(seed, n - i) for i in range(n)]  # distinct from the indices, and per seed
    batch_states = [("s", seed, i) for i in range(n)] if states else None
    return BatchInputs(actions, batch_states, [1] * n, want_state)


# Orders in which ready workers are reported ---------------------------------------------------
def as_given(ready: list[int]) -> list[int]:
    return ready


def last_worker_first(ready: list[int]) -> list[int]:
    """One worker at a time, the highest-numbered one ready: worker 0 answers last."""
    return [max(ready)]


def first_worker_first(ready: list[int]) -> list[int]:
    """One worker at a time, the lowest-numbered one ready."""
    return [min(ready)]


class RandomOrder:
    """A random non-empty subset of the ready workers, in random order."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def __call__(self, ready: list[int]) -> list[int]:
        shuffled = self.rng.sample(ready, len(ready))
        return shuffled[: self.rng.randint(1, len(shuffled))]


# The fake backend -----------------------------------------------------------------------------
class FakeBackend(Backend):
    """Workers simulated in memory, with scripted faults.

    Args:
        n_workers: How many workers.
        faults: ``{(worker, n): fault}``: the ``n``-th request (from 0, counting every
            request ever submitted to that worker, re-runs and recovery included) hangs,
            kills the worker ("die"), raises ValueError ("error"), or finds the worker
            dead when submitted ("dead_on_submit").
        chunk_faults: ``{start: [fault, ...]}``: the faults of the successive runs of the
            chunk starting at element ``start`` (None: that run is fine).
        order: Which of the ready workers ``wait`` reports, in which order.
        interrupt_on_wait: Raise KeyboardInterrupt in this call to ``wait`` (from 1).
        interrupt_on_encode: Raise KeyboardInterrupt when encoding this chunk index.
    """

    def __init__(
        self,
        n_workers: int,
        faults: dict[tuple[int, int], Fault] | None = None,
        chunk_faults: dict[int, list[Fault | None]] | None = None,
        order: Order = as_given,
        interrupt_on_wait: int | None = None,
        interrupt_on_encode: int | None = None,
    ):
        self.n_workers = n_workers
        self.faults = dict(faults or {})
        self.chunk_faults = {start: deque(runs) for start, runs in (chunk_faults or {}).items()}
        self.order = order
        self.interrupt_on_wait = interrupt_on_wait
        self.interrupt_on_encode = interrupt_on_encode
        self.queues: dict[int, deque[Entry]] = {w: deque() for w in range(n_workers)}
        self.dead: set[int] = set()
        self.submitted: list[tuple[int, Any]] = []  # (worker, request), in submission order
        self.answered: list[tuple[int, Any]] = []  # (worker, request) read, in that order
        self.events: list[tuple[str, int, Any]] = []  # ("submit" | "answer", worker, request)
        self.restarts: Counter[int] = Counter()
        self.abandoned: list[list[int]] = []
        self.wait_timeouts: list[float | None] = []
        self.bounds: list[tuple[int, int]] | None = None
        self.stale = 0
        self.closed = False
        self._layout: object | None = None
        self._tickets = 0
        self._sent_to: Counter[int] = Counter()

    # Encoding
    def prepare(self, inputs: BatchInputs, bounds: list[tuple[int, int]]) -> Any:
        self.bounds = list(bounds)
        self._layout = object()
        return self._layout

    def encode(self, inputs: BatchInputs, layout: Any, index: int, start: int, stop: int) -> Any:
        assert layout is self._layout, "encode got another layout than prepare returned"
        if index == self.interrupt_on_encode:
            raise KeyboardInterrupt
        actions = tuple(inputs.actions[start:stop])
        return Chunk(index, start, stop, actions, inputs.want_state)

    # Running
    def _fault(self, worker: int, request: Any) -> Fault | None:
        nth = self._sent_to[worker]
        self._sent_to[worker] += 1
        fault = self.faults.get((worker, nth))
        if isinstance(request, Chunk) and self.chunk_faults.get(request.start):
            fault = self.chunk_faults[request.start].popleft() or fault
        return fault

    def submit(self, worker: int, request: Any) -> int:
        assert 0 <= worker < self.n_workers
        fault = self._fault(worker, request)
        self.submitted.append((worker, request))
        self.events.append(("submit", worker, request))
        if fault == "dead_on_submit":
            self.dead.add(worker)
        if worker in self.dead:
            raise WorkerCrashedError(f"worker {worker} was found dead")
        self._tickets += 1
        self.queues[worker].append(Entry(self._tickets, request, fault))
        return self._tickets

    def wait(self, tickets: dict[int, Any], timeout: float | None) -> list[int]:
        self.wait_timeouts.append(timeout)
        if len(self.wait_timeouts) == self.interrupt_on_wait:
            raise KeyboardInterrupt
        assert tickets, "wait on no ticket"
        for worker, ticket in tickets.items():
            queued = [entry.ticket for entry in self.queues[worker]]
            assert ticket in queued, f"wait on ticket {ticket}, not queued at {worker}: {queued}"
        ready = [w for w in tickets if self.queues[w][0].fault != "hang"]
        if not ready:
            assert timeout is not None, "wait(timeout=None) on hanging workers: blocks forever"
            return []
        reported = self.order(ready)
        assert reported and set(reported) <= set(ready)
        return reported

    def result(self, worker: int, ticket: Any, request: Any) -> Any:
        assert self.queues[worker], f"result of worker {worker}, which holds no request"
        entry = self.queues[worker].popleft()
        assert entry.fault != "hang", "read a reply that never came"
        if entry.ticket != ticket:
            self.stale += 1
            return STALE
        assert entry.request == request
        if entry.fault == "die":
            self.queues[worker].clear()  # whatever it held died with it
            self.dead.add(worker)
            raise WorkerCrashedError(f"worker {worker} died")
        self.answered.append((worker, request))
        self.events.append(("answer", worker, request))
        if entry.fault == "error":
            raise ValueError(f"the env failed on {request}")
        if isinstance(request, Chunk):
            rows = [
                element_row(i, action, request.want_state)
                for i, action in enumerate(request.actions, request.start)
            ]
            return ChunkResult(transpose(rows), compute_s=1e-6 * len(rows))
        if isinstance(request, Recover):
            return ("recovered", worker)
        return ("answer", worker, request.name)

    def restart(self, worker: int) -> None:
        self.restarts[worker] += 1
        self.queues[worker].clear()
        self.dead.discard(worker)

    def abandon(self, workers: list[int]) -> None:
        self.abandoned.append(list(workers))  # their late replies stay queued: STALE later
        for worker in workers:  # released from a call that hangs, whose reply never comes
            queue = self.queues[worker]
            self.queues[worker] = deque(entry for entry in queue if entry.fault != "hang")

    def close(self, terminate: bool = False) -> None:
        self.closed = True

    # For the tests
    def runs_of(self, start: int) -> int:
        """How many times the chunk starting at ``start`` was submitted."""
        return sum(isinstance(r, Chunk) and r.start == start for _, r in self.submitted)

    def idle(self) -> bool:
        return not any(self.queues.values())


def collected_starts(backend: FakeBackend) -> list[int]:
    return [request.start for _, request in backend.answered if isinstance(request, Chunk)]


def depth_of(depth: int) -> Callable[[int], int]:
    return lambda chunk_size: depth


def assert_all_done(batch: Batch) -> None:
    assert all(task.done for task in batch.tasks)
    assert not batch.unsent
    assert not batch.in_flight()


# 1. Input order -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [None, 0, 7], ids=["last-worker-first", "random-0", "random-7"])
@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("n_workers", [2, 3])
def test_results_come_back_in_input_order(n_workers: int, depth: int, seed: int | None):
    order: Order = last_worker_first if seed is None else RandomOrder(seed)
    backend = FakeBackend(n_workers, order=order)
    scheduler = Scheduler(backend, chunks_per_worker=4, queue_depth=depth_of(depth))
    inputs = make_inputs(1000)
    bounds = plan_chunks(1000, n_workers, has_states=True, chunks_per_worker=4)
    assert len(bounds) > n_workers  # several chunks per worker, handed out as they free up

    batch = scheduler.run(inputs)

    assert backend.bounds == bounds
    assert [(task.start, task.stop) for task in batch.tasks] == bounds
    assert sorted(r.start for _, r in backend.submitted) == [start for start, _ in bounds]
    starts = collected_starts(backend)
    assert sorted(starts) == [start for start, _ in bounds]
    assert starts != sorted(starts), "the fake should have answered out of order"
    assert batch.columns() == expected_columns(inputs)
    assert_all_done(batch)
    assert backend.idle()
    assert batch.chunk_costs() == [(stop - start, 1e-6 * (stop - start)) for start, stop in bounds]


@pytest.mark.parametrize("want_state", [True, False])
def test_without_states_chunk_i_goes_to_worker_i(want_state: bool):
    backend = FakeBackend(3, order=last_worker_first)
    inputs = make_inputs(10, states=False, want_state=want_state)

    batch = Scheduler(backend, chunks_per_worker=4, queue_depth=depth_of(4)).run(inputs)

    assert backend.bounds == plan_chunks(10, 3, has_states=False) == [(0, 4), (4, 7), (7, 10)]
    assert [(w, r.start) for w, r in backend.submitted] == [(0, 0), (1, 4), (2, 7)]
    assert batch.on_crash is OnCrash.RAISE
    assert batch.columns() == expected_columns(inputs)
    assert len(batch.columns()) == (6 if want_state else 5)


def test_by_default_each_worker_gets_one_chunk():
    backend = FakeBackend(3, order=RandomOrder(2))
    inputs = make_inputs(1000)

    batch = Scheduler(backend).run(inputs)

    assert (
        backend.bounds
        == plan_chunks(1000, 3, has_states=True)
        == [(0, 334), (334, 667), (667, 1000)]
    )
    assert sorted(worker for worker, _ in backend.submitted) == [0, 1, 2]
    assert batch.columns() == expected_columns(inputs)


# 2. Re-runs -----------------------------------------------------------------------------------
def test_a_chunk_killing_its_worker_every_time_is_rerun_max_reruns_times():
    backend = FakeBackend(2, chunk_faults={250: ["die"] * (MAX_RERUNS + 5)})
    scheduler = Scheduler(backend, chunks_per_worker=4)

    with pytest.raises(
        WorkerCrashedError, match=r"the worker running elements 250\.\.374 died"
    ) as caught:
        scheduler.run(make_inputs(1000))

    assert plan_chunks(1000, 2, has_states=True, chunks_per_worker=4)[2] == (250, 375)
    assert backend.runs_of(250) == MAX_RERUNS + 1
    assert sum(backend.restarts.values()) == MAX_RERUNS + 1  # replaced after every death
    message = str(caught.value)
    assert f"on each of {MAX_RERUNS + 1} runs (re-run {MAX_RERUNS} times)" in message
    assert isinstance(caught.value.__cause__, WorkerCrashedError)
    assert "raised by elements 250..374 during step_batch" in caught.value.__notes__[0]
    assert backend.idle()  # the other worker's chunk was collected before raising


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize(
    ("faults", "chunk_faults"),
    [
        ({}, {250: ["die"]}),  # a chunk kills its worker once
        ({(1, 0): "die"}, {}),  # worker 1 dies on its first chunk (with another queued)
        ({(0, 1): "dead_on_submit"}, {}),  # worker 0 is found dead when sent its 2nd chunk
    ],
    ids=["chunk-dies-once", "worker-dies-once", "dead-on-submit"],
)
def test_a_chunk_lost_once_is_rerun_and_the_result_is_unchanged(
    depth: int,
    faults: dict[tuple[int, int], Fault],
    chunk_faults: dict[int, list[Fault | None]],
):
    inputs = make_inputs(1000)
    clean = (
        Scheduler(FakeBackend(2), chunks_per_worker=4, queue_depth=depth_of(depth))
        .run(inputs)
        .columns()
    )
    backend = FakeBackend(2, faults, chunk_faults, order=RandomOrder(3))

    batch = Scheduler(backend, chunks_per_worker=4, queue_depth=depth_of(depth)).run(inputs)

    assert batch.columns() == clean == expected_columns(inputs)
    assert sum(backend.restarts.values()) == 1
    assert len(backend.submitted) > len(batch.tasks)  # something was sent again
    assert sum(task.reruns for task in batch.tasks) == 1
    assert not batch.errors()
    assert backend.idle()


def test_a_lost_chunk_without_states_is_not_rerun():
    backend = FakeBackend(2, faults={(1, 0): "die"})
    with pytest.raises(WorkerCrashedError, match=r"elements 5\.\.9 could not be re-run"):
        Scheduler(backend, chunks_per_worker=4).run(make_inputs(10, states=False))
    assert backend.runs_of(5) == 1
    assert backend.restarts == Counter({1: 1})


# 3. Late replies ------------------------------------------------------------------------------
def test_a_stale_reply_is_dropped_and_the_real_one_collected():
    backend = FakeBackend(2)
    scheduler = Scheduler(backend, chunks_per_worker=4)
    scheduler.abandon(scheduler.send({0: Call("first")}, "first", OnCrash.RAISE))
    assert backend.abandoned == [[0]]

    batch = scheduler.gather(
        scheduler.send({0: Call("second"), 1: Call("x")}, "get", OnCrash.RAISE)
    )

    assert backend.stale == 1
    assert batch.results() == {0: ("answer", 0, "second"), 1: ("answer", 1, "x")}
    assert backend.idle()


def test_stale_chunk_replies_of_an_abandoned_batch_do_not_leak_into_the_next():
    backend = FakeBackend(3, order=RandomOrder(1))
    scheduler = Scheduler(backend, chunks_per_worker=4, queue_depth=depth_of(2))
    old = scheduler.dispatch(make_inputs(1000, seed=1))
    scheduler.abandon(old)
    inputs = make_inputs(1000, seed=2)

    batch = scheduler.run(inputs)

    assert backend.stale == 6  # two chunks queued at each of the three workers
    assert batch.columns() == expected_columns(inputs)
    assert backend.idle()


# 4. Timeouts ----------------------------------------------------------------------------------
def test_a_hanging_worker_times_the_batch_out_and_is_replaced():
    backend = FakeBackend(3, faults={(1, 0): "hang"}, order=RandomOrder(2))
    scheduler = Scheduler(backend, chunks_per_worker=4)
    batch = scheduler.dispatch(make_inputs(1000))

    with pytest.raises(CallTimeoutError) as caught:
        scheduler.gather(batch, timeout=0.01)

    assert isinstance(caught.value, TimeoutError)
    message = str(caught.value)
    assert "step_batch_wait took longer than 0.01 s" in message
    assert "workers [1] were replaced" in message
    assert backend.abandoned == [[1]]  # replaced as a Ctrl-C replaces them: all at once
    assert batch.abandoned == [1]
    assert_all_done(batch)
    assert all(t is not None and t <= 0.01 for t in backend.wait_timeouts)
    # The replaced worker answers the next call.
    inputs = make_inputs(300, seed=5)
    assert scheduler.run(inputs, timeout=10.0).columns() == expected_columns(inputs)


def test_a_send_timeout_names_the_call_and_every_busy_worker():
    backend = FakeBackend(3, faults={(0, 0): "hang", (2, 0): "hang"})
    scheduler = Scheduler(backend, chunks_per_worker=4, unit="sub-env")
    batch = scheduler.send({w: Call("reset") for w in range(3)}, "reset", OnCrash.REPORT)

    with pytest.raises(CallTimeoutError, match=r"reset_wait took longer .* sub-envs \[0, 2\]"):
        scheduler.gather(batch, timeout=0.01)

    assert backend.abandoned == [[0, 2]]
    assert batch.abandoned == [0, 2]
    assert batch.tasks[1].result == ("answer", 1, "reset")


# 5. Abandon -----------------------------------------------------------------------------------
def test_abandon_releases_the_busy_workers_and_drops_unsent_tasks():
    backend = FakeBackend(2)
    scheduler = Scheduler(backend, chunks_per_worker=4)
    batch = scheduler.dispatch(make_inputs(1000))
    assert len(batch.in_flight()) == 2
    assert len(batch.unsent) == len(batch.tasks) - 2

    scheduler.abandon(batch)

    assert backend.abandoned == [[0, 1]]
    assert batch.abandoned == [0, 1]
    assert_all_done(batch)
    assert len(backend.submitted) == 2  # the unsent ones never left
    assert backend.restarts == Counter()
    assert scheduler.gather(batch) is batch  # nothing left to collect
    assert len(backend.submitted) == 2


def test_abandon_names_only_the_workers_still_busy():
    backend = FakeBackend(3)
    scheduler = Scheduler(backend, chunks_per_worker=4)
    scheduler.abandon(scheduler.send({2: Call("a")}, "a", OnCrash.RAISE))
    assert backend.abandoned == [[2]]


def test_abandon_with_a_recovery_request_replaces_the_busy_workers():
    backend = FakeBackend(3)
    labels: list[str] = []
    scheduler = Scheduler(
        backend, chunks_per_worker=4, recovery=lambda label: labels.append(label) or Recover()
    )
    batch = scheduler.send({0: Call("step"), 2: Call("step")}, "step", OnCrash.REPORT)

    scheduler.abandon(batch)

    # Built for a call given up on: no answer of it reports the replacement to the user.
    assert labels == [ABANDONED, ABANDONED]
    assert backend.abandoned == [[0, 2]]  # replaced together, then each sub-env rebuilt
    assert backend.answered == [(0, Recover()), (2, Recover())]
    assert batch.abandoned == [0, 2]
    assert_all_done(batch)


def test_a_failed_replacement_leaves_the_others_set_up_and_is_raised_after():
    class FailingAbandon(FakeBackend):
        def abandon(self, workers):
            super().abandon(workers)
            raise RuntimeError("worker 0's replacement could not be built")

    backend = FailingAbandon(3)
    scheduler = Scheduler(backend, chunks_per_worker=4, recovery=lambda label: Recover())
    scheduler.set_attributes({2: SetAttr("frameskip", 3)}, "frameskip")
    backend.answered.clear()
    batch = scheduler.send({0: Call("step"), 2: Call("step")}, "step", OnCrash.REPORT)

    with pytest.raises(RuntimeError, match="could not be built"):
        scheduler.abandon(batch)

    assert backend.answered == [(0, Recover()), (2, SetAttr("frameskip", 3)), (2, Recover())]


def test_set_attributes_keeps_what_each_worker_took_and_sets_a_dead_ones_replacement():
    """A value refused by one worker, or lost with another, cost the others theirs."""
    backend = FakeBackend(3, faults={(1, 0): "error", (2, 0): "die"})
    scheduler = Scheduler(backend, chunks_per_worker=4)
    requests = {worker: SetAttr("frameskip", 2 + worker) for worker in range(3)}

    batch = scheduler.set_attributes(requests, "frameskip")

    assert [type(task.error) for task in batch.tasks] == [type(None), ValueError, type(None)]
    assert (2, requests[2]) in backend.answered  # set again on worker 2's replacement
    backend.answered.clear()
    for worker in range(3):
        scheduler.replacements.replace(worker, "step")
    assert backend.answered == [(0, requests[0]), (2, requests[2])]  # 1 refused its value


# 6. Crash policies of send --------------------------------------------------------------------
def test_rerun_sends_the_lost_request_again():
    backend = FakeBackend(2, faults={(1, 0): "die"})
    scheduler = Scheduler(backend, chunks_per_worker=4)

    batch = scheduler.gather(scheduler.send({0: Call("r"), 1: Call("r")}, "reset", OnCrash.RERUN))

    assert batch.results() == {0: ("answer", 0, "r"), 1: ("answer", 1, "r")}
    assert [r for w, r in backend.submitted if w == 1] == [Call("r"), Call("r")]
    assert backend.restarts == Counter({1: 1})
    assert batch.tasks[1].reruns == 1
    assert not batch.tasks[1].restarted


def test_report_makes_the_recovery_answer_the_result():
    backend = FakeBackend(2, faults={(1, 0): "die"})
    labels: list[str] = []
    scheduler = Scheduler(
        backend, chunks_per_worker=4, recovery=lambda label: labels.append(label) or Recover()
    )

    batch = scheduler.gather(scheduler.send({0: Call("s"), 1: Call("s")}, "step", OnCrash.REPORT))

    assert batch.tasks[1].result == ("recovered", 1)
    assert batch.tasks[1].restarted
    assert batch.tasks[1].error is None
    assert batch.tasks[0].result == ("answer", 0, "s")
    assert not batch.tasks[0].restarted
    assert [r for w, r in backend.submitted if w == 1] == [Call("s"), Recover()]
    assert backend.restarts == Counter({1: 1})
    assert labels == ["step"]  # the call the worker died in, whose answer reports it


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, WorkerCrashedError, "worker 1 was replaced, but its reset request was lost"),
        (
            {"crash_error": SubEnvCrashedError, "unit": "sub-env"},
            SubEnvCrashedError,
            "sub-env 1 was replaced, but its reset request was lost",
        ),
    ],
)
def test_raise_fails_the_call(kwargs: dict[str, Any], error: type[Exception], message: str):
    backend = FakeBackend(3, faults={(1, 0): "die"}, order=first_worker_first)
    scheduler = Scheduler(backend, chunks_per_worker=4, **kwargs)
    batch = scheduler.send({w: Call("reset") for w in range(3)}, "reset", OnCrash.RAISE)

    with pytest.raises(error, match=message) as caught:
        scheduler.gather(batch)

    assert type(caught.value) is error
    assert str(caught.value).startswith("worker 1 died; ")
    assert isinstance(caught.value.__cause__, WorkerCrashedError)
    assert backend.restarts == Counter({1: 1})
    assert len(backend.submitted) == 3  # nothing re-sent
    assert batch.tasks[2].result == ("answer", 2, "reset")  # collected before raising
    assert backend.idle()


def test_an_env_error_is_raised_once_every_other_task_is_back():
    backend = FakeBackend(3, faults={(0, 0): "error"}, order=first_worker_first)
    scheduler = Scheduler(backend, chunks_per_worker=4)
    batch = scheduler.send({w: Call("reset") for w in range(3)}, "reset", OnCrash.REPORT)

    with pytest.raises(ValueError, match="the env failed") as caught:
        scheduler.gather(batch)

    assert [w for w, _ in backend.answered] == [0, 1, 2]  # 0 failed first; 1, 2 still read
    assert backend.idle()
    assert_all_done(batch)
    assert batch.tasks[1].result == ("answer", 1, "reset")
    assert caught.value.__notes__ == ["raised by worker 0 during reset; the env is still usable"]
    assert backend.restarts == Counter()


def test_the_note_names_the_other_workers_that_raised():
    backend = FakeBackend(3, faults={(0, 0): "error", (2, 0): "error"})
    scheduler = Scheduler(backend, chunks_per_worker=4, unit="sub-env")
    batch = scheduler.send({w: Call("step") for w in range(3)}, "step", OnCrash.REPORT)

    with pytest.raises(ValueError) as caught:
        scheduler.gather(batch)

    assert caught.value is batch.tasks[0].error
    assert caught.value.__notes__ == [
        "raised by sub-env 0 during step (sub-envs [2] raised too); the env is still usable"
    ]


def test_a_chunk_error_names_its_elements_after_the_other_chunks_are_back():
    backend = FakeBackend(2, chunk_faults={250: ["error"]}, order=RandomOrder(4))
    scheduler = Scheduler(backend, chunks_per_worker=4, queue_depth=depth_of(2))
    batch = scheduler.dispatch(make_inputs(1000))

    with pytest.raises(ValueError) as caught:
        scheduler.gather(batch)

    assert caught.value.__notes__ == [
        "raised by elements 250..374 during step_batch; the env is still usable"
    ]
    assert backend.idle()  # every chunk in flight was collected first
    assert backend.restarts == Counter()
    # Once a chunk failed no other is handed out: the call fails anyway.
    failed = next(
        i for i, (kind, _, r) in enumerate(backend.events) if r.start == 250 and kind == "answer"
    )
    assert all(kind == "answer" for kind, _, _ in backend.events[failed:])
    assert len(backend.submitted) < len(batch.tasks)


def test_raise_errors_false_returns_the_batch_with_the_errors():
    backend = FakeBackend(2, faults={(1, 0): "error"})
    scheduler = Scheduler(backend, chunks_per_worker=4)
    batch = scheduler.send({0: Call("r"), 1: Call("r")}, "reset", OnCrash.REPORT)

    assert scheduler.gather(batch, raise_errors=False) is batch

    assert isinstance(batch.tasks[1].error, ValueError)
    assert not hasattr(batch.tasks[1].error, "__notes__")
    assert batch.errors() == [batch.tasks[1]]
    assert batch.results() == {0: ("answer", 0, "r")}
    assert_all_done(batch)


# 7. Ctrl-C ------------------------------------------------------------------------------------
def test_ctrl_c_in_wait_abandons_the_batch_and_goes_on():
    backend = FakeBackend(2, interrupt_on_wait=2)
    scheduler = Scheduler(backend, chunks_per_worker=4)
    batch = scheduler.dispatch(make_inputs(1000))

    with pytest.raises(KeyboardInterrupt):
        scheduler.gather(batch)

    assert len(backend.wait_timeouts) == 2
    assert backend.abandoned == [[0, 1]]
    assert batch.abandoned == [0, 1]
    assert_all_done(batch)
    assert len(collected_starts(backend)) == 2  # answered before the interrupt
    assert len(backend.submitted) == 4  # no chunk sent after it


def test_an_unforeseen_error_while_gathering_abandons_the_batch():
    backend = FakeBackend(2)
    scheduler = Scheduler(backend, chunks_per_worker=4)
    batch = scheduler.dispatch(make_inputs(1000))
    wait = backend.wait

    def broken_once(tickets: dict, timeout: float | None) -> list[int]:
        backend.wait = wait
        raise OSError("the pipe broke")

    backend.wait = broken_once  # type: ignore[method-assign]
    with pytest.raises(OSError, match="the pipe broke"):
        scheduler.gather(batch)

    assert backend.abandoned == [[0, 1]]  # no worker stays on the call
    assert_all_done(batch)
    inputs = make_inputs(300, seed=4)
    assert scheduler.run(inputs).columns() == expected_columns(inputs)  # late replies dropped
    assert backend.idle()


def test_ctrl_c_while_encoding_abandons_what_was_sent():
    backend = FakeBackend(2, interrupt_on_encode=3)
    with pytest.raises(KeyboardInterrupt):
        Scheduler(backend, chunks_per_worker=4).dispatch(make_inputs(1000))
    assert backend.abandoned == [[0, 1]]


# Nested recoveries ------------------------------------------------------------------------------
# A dead worker's lost tasks are re-sent one by one. When one of those sends finds the
# replacement dead too, the nested recovery re-sends (or gives up) every lost task, and the
# outer one must stop there.
def test_a_nested_recovery_does_not_run_a_lost_chunk_twice():
    # Worker 0 holds chunks 0..124 and 250..374 (queue depth 2); it dies on the first, and
    # its replacement is found dead when re-sent it.
    backend = FakeBackend(2, faults={(0, 0): "die", (0, 2): "dead_on_submit"})
    inputs = make_inputs(1000)

    batch = Scheduler(backend, chunks_per_worker=4, queue_depth=depth_of(2)).run(inputs)

    assert batch.columns() == expected_columns(inputs)  # right, thanks to STALE
    assert backend.runs_of(250) == 2  # not sent twice to the second replacement


def test_a_chunk_given_up_by_a_nested_recovery_is_not_sent_after_the_call():
    # As above, but the nested recovery gives the call up (chunk 0..124 hit MAX_RERUNS):
    # chunk 250..374 must not be sent after that, to run after the call is over.
    faults: dict[tuple[int, int], Fault] = {(0, 0): "die", (0, 2): "die", (0, 4): "dead_on_submit"}
    backend = FakeBackend(2, faults)
    scheduler = Scheduler(backend, chunks_per_worker=4, queue_depth=depth_of(2))

    with pytest.raises(WorkerCrashedError, match=r"running elements 0\.\.124 died"):
        scheduler.run(make_inputs(1000))

    assert backend.idle(), f"left running after the call: {backend.queues[0]}"
