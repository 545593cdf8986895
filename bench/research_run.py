"""Multi-LLM research wall time: what the durable engine adds to five providers' answers (issue 8).

Five scripted providers (five OpenAI-compatible provider names, so that the ``llm-calls``
queue's per-provider partitions do not serialise them) each take PROVIDER_DELAY seconds to
answer; the synthesis model (a sixth provider) takes SYNTHESIS_DELAY. The models are
pydantic-ai ``FunctionModel`` overrides keyed by model string (as in
``tests/research/engine_world.py``); the providers' keys and base URLs are dummies that are
never called (real model requests are disabled and every socket connection outside the
loopback is refused; the run stops if one is attempted).

The process is what ``scholarstream serve`` runs for research: ``build_runtime`` + ``Engine``
(DBOS, its queues and schedules), ``tune_for_serving()``, on uvloop when installed, with
``ResearchService`` called directly (no HTTP). Each run drafts a research of the five models,
then times ``ResearchService.start`` to the moment ``get`` first shows it ``completed``
(polled every --poll seconds).

Scenarios
  all-ok       the five answer; the research synthesises and completes.
  one-failed   one provider fails (HTTP 500, after the same delay); the research becomes
               ``awaiting_confirmation``, and the benchmark calls ``confirm(proceed)`` as
               soon as it sees that status (an automatic proceed); the four answers are
               synthesised.

    python bench/research_run.py [--runs 5] [--warmup 1] [--provider-delay 2]
                                 [--synthesis-delay 0.5] [--scenarios all-ok,one-failed]
                                 [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]
                                 [--json bench/results/research_run.<backend>.json]
                                 [--diag-queue-polling SECONDS]

SQLite (a fresh temporary data directory) by default. With --database-url a PostgreSQL
server is used: a throwaway database is created on it for the run and dropped afterwards
(the URL's own database is only used to create and drop it).
``DEFINITIONS`` (printed with the tables) says what the figures mean. A warm-up run per
scenario (the engine's first work after launch) is shown apart and not counted.

Finding out why: each run's critical path (from DBOS's records of the workflows and steps,
and the models' own times), the SQL statements on both databases, and the time the
process waited for a CPU (the machine may be shared) are printed and kept in the JSON.
``--diag-queue-polling SECONDS`` changes the llm-calls queue's polling interval on purpose,
to measure its share; its tables are not results of the product.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Coroutine, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from _offline import blocked, forbid_network
from _pg import throwaway_postgres_database

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import Model
    from pydantic_ai.models.function import AgentInfo

    from scholarstream.research import ResearchService
    from scholarstream.settings import Settings

T = TypeVar("T")

PROVIDERS = ("benchone", "benchtwo", "benchthree", "benchfour", "benchfive")
MODELS = tuple(f"{provider}:scripted" for provider in PROVIDERS)
SYNTHESIZER = "benchsynth:scripted"
FAILING_MODEL = MODELS[-1]
# Never called: the models are scripted. A loopback "discard" port, should one ever be.
DUMMY_BASE_URL = "http://127.0.0.1:9/v1"
TARGET_OVERHEAD_SECONDS = 1.0
SCENARIOS = ("all-ok", "one-failed")
WORK_PROVIDER = "provider answered"
WORK_SYNTHESIS = "synthesis model answered"
PROMPT = "Tirzepatide safety in adolescents: what do the trials and the regulators say?"

DEFINITIONS = """\
wall      = from calling ResearchService.start to the first get() that shows the research
            completed (the bench polls get() every --poll s; the poll adds up to that much).
ideal     = provider delay + synthesis delay: the wall time with an engine that costs nothing
            (the five calls in parallel, then the synthesis; in one-failed, an instant
            proceed).
overhead  = wall - ideal. Target: under 1 s in every measured run (PASS/FAIL per scenario).
Phases (medians over the measured runs; seconds):
  start()   the call of ResearchService.start (lock, save, enqueue the five calls).
  pickup    start() called -> the first / the last provider called (queue dispatch).
  claims    the first -> the last of the five calls dequeued (DBOS claims partitions one
            at a time; PostgreSQL only: SQLite's DBOS times are whole seconds on Python 3.11).
  calls     the first provider called -> the last answered (the delay, the pickups' spread,
            and the event loop's lateness in waking the sleeps).
  ->synth   the last provider answered -> the synthesis model called: record + advance +
            enqueue the synthesis + its dispatch; in one-failed it also holds the wait until
            the bench sees awaiting_confirmation and its confirm(proceed) call.
  ..seen    (one-failed) last provider answered -> awaiting_confirmation seen by the poll.
  confirm   (one-failed) the confirm(proceed) call.
  synth     the synthesis model's own time.
  ->done    the synthesis answered -> completed_at saved in the record (the record step).
  ->seen    completed_at -> the bench's poll saw it (poll granularity, not engine cost).
  cpu wait  the time this process's threads were runnable but had no CPU during the run,
            summed over its threads (the machine is shared: other processes had it). The
            overhead fitted against it (least squares) is printed under the table; its
            intercept estimates the overhead without contention (an extrapolation).
  app SQL / DBOS SQL  statements run during the run on the app database (the bench polls
            get() through a handle of its own, not counted) and on DBOS's system database
            (its queue polling included).
Critical path (ms): the chain of marks from start() to completed seen, through the call
  recorded last (whose record moved the research on) and the synthesis; each segment is the
  time from the previous mark to the one named, so the segments add up to the wall time,
  and those other than the models' own time add up to the overhead. Step times are DBOS's
  records of each checkpointed step; "enqueued"/"dequeued" are DBOS's too, and shown on
  PostgreSQL only (on SQLite before Python 3.12 DBOS stamps them in whole seconds). DBOS's
  times are wall-clock milliseconds set against the bench's monotonic clock: a segment may
  read a few ms off (even slightly negative)."""


# --- scripted providers ----------------------------------------------------------------------


@dataclass
class Timeline:
    """When each scripted model was called and answered (``time.monotonic()``), in one run."""

    started: dict[str, float] = field(default_factory=dict)
    ended: dict[str, float] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)


class ScriptedProviders:
    """One FunctionModel per model string: sleeps its delay, then answers (or raises an
    HTTP 500 for the models in ``failing``)."""

    def __init__(self, provider_delay: float, synthesis_delay: float) -> None:
        self.provider_delay = provider_delay
        self.synthesis_delay = synthesis_delay
        self.failing: frozenset[str] = frozenset()
        self.timeline = Timeline()

    def reset(self, failing: frozenset[str]) -> Timeline:
        self.failing = failing
        self.timeline = Timeline()
        return self.timeline

    def overrides(self) -> dict[str, Model]:
        models: dict[str, Model] = {name: self._model(name, self.provider_delay) for name in MODELS}
        models[SYNTHESIZER] = self._model(SYNTHESIZER, self.synthesis_delay)
        return models

    def _model(self, name: str, delay: float) -> Model:
        from pydantic_ai.exceptions import ModelHTTPError
        from pydantic_ai.messages import ModelResponse, TextPart
        from pydantic_ai.models.function import FunctionModel

        async def respond(_messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
            timeline = self.timeline
            timeline.calls[name] += 1
            timeline.started.setdefault(name, time.monotonic())
            await asyncio.sleep(delay)
            timeline.ended[name] = time.monotonic()
            if name in self.failing:
                raise ModelHTTPError(500, name, body={"error": "scripted failure"})
            return ModelResponse(parts=[TextPart(f"Answer of {name}.")])

        return FunctionModel(respond, model_name=name)


# --- one run ---------------------------------------------------------------------------------


def runqueue_wait_seconds() -> float:
    """How long this process's threads have waited for a CPU while runnable (others had
    it): the machine is shared, and such waits show up as engine overhead."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


class StatementCounter:
    """SQL statements run on the app database and on DBOS's system database (its queue
    polling included), counted in the drivers' threads."""

    def __init__(self) -> None:
        self.app = 0
        self.system = 0
        self.attached = False

    def attach(self, app_engine: Any) -> None:
        from sqlalchemy import event

        def count_app(*_args: Any) -> None:
            self.app += 1

        def count_system(*_args: Any) -> None:
            self.system += 1

        event.listen(app_engine.sync_engine, "before_cursor_execute", count_app)
        try:  # DBOS's own engine is not public API: counted where it can be found
            from dbos._dbos import _get_dbos_instance

            event.listen(_get_dbos_instance()._sys_db.engine, "before_cursor_execute", count_system)
            self.attached = True
        except Exception:  # a diagnostic, never a reason to stop
            logging.getLogger(__name__).info("DBOS's statements are not counted")

    def snapshot(self) -> tuple[int, int]:
        return self.app, self.system


@dataclass
class Run:
    scenario: str
    wall: float
    ideal: float
    overhead: float
    start_call: float
    first_pickup: float
    last_pickup: float
    calls: float
    to_synthesis: float
    synthesis: float
    to_done: float
    to_seen: float
    awaiting_seen: float | None = None
    confirm_call: float | None = None
    polls: int = 0
    cpu_wait: float = 0.0  # runqueue_wait_seconds() during the run
    app_statements: int = 0  # SQL statements on the app database during the run
    system_statements: int | None = None  # ... and on DBOS's system database
    claims: float | None = None  # first -> last of the five calls dequeued (PostgreSQL)
    # The critical path through the engine: (the mark reached, seconds since the previous).
    path: list[tuple[str, float]] = field(default_factory=list)


class BenchError(RuntimeError):
    pass


async def run_once(
    service: ResearchService,
    watcher: ResearchService,
    owner_id: uuid.UUID,
    providers: ScriptedProviders,
    scenario: str,
    *,
    poll: float,
    give_up_after: float,
    pause: float,
    precise_workflow_times: bool,
    statements: StatementCounter,
) -> Run:
    from scholarstream.research import ResearchStatus
    from scholarstream.research.core import ConfirmAction, DraftRequest

    failing = frozenset({FAILING_MODEL}) if scenario == "one-failed" else frozenset()
    draft = await service.draft(
        owner_id,
        DraftRequest(prompt=PROMPT, selected_llms=list(MODELS), synthesis_llm=SYNTHESIZER),
    )
    timeline = providers.reset(failing)

    waited0 = runqueue_wait_seconds()
    app0, system0 = statements.snapshot()
    wall_clock0 = datetime.now(UTC).timestamp()
    t0 = time.monotonic()
    await service.start(owner_id, draft.id)
    started = time.monotonic()
    awaiting_seen: float | None = None
    confirmed: float | None = None
    polls = 0
    while True:
        research = await watcher.get(owner_id, draft.id)
        polls += 1
        now = time.monotonic()
        if research.status == ResearchStatus.COMPLETED:
            seen = now
            break
        if research.status == ResearchStatus.AWAITING_CONFIRMATION:
            if scenario != "one-failed" or awaiting_seen is not None:
                raise BenchError(f"{scenario}: unexpected awaiting_confirmation: {research}")
            awaiting_seen = now
            await service.confirm(owner_id, draft.id, ConfirmAction.PROCEED)
            confirmed = time.monotonic()
            continue
        if research.status == ResearchStatus.FAILED:
            raise BenchError(f"{scenario}: the research failed: {research}")
        if now - t0 > give_up_after:
            raise BenchError(f"{scenario}: not completed within {give_up_after:g} s: {research}")
        await asyncio.sleep(poll)

    waited = runqueue_wait_seconds() - waited0
    app1, system1 = statements.snapshot()
    _check(research, scenario, timeline)
    assert research.completed_at is not None
    completed = research.completed_at.timestamp() - wall_clock0 + t0  # on the monotonic clock
    answered = [timeline.ended[m] for m in MODELS]
    called = [timeline.started[m] for m in MODELS]
    ideal = providers.provider_delay + providers.synthesis_delay
    run = Run(
        scenario=scenario,
        wall=seen - t0,
        ideal=ideal,
        overhead=seen - t0 - ideal,
        start_call=started - t0,
        first_pickup=min(called) - t0,
        last_pickup=max(called) - t0,
        calls=max(answered) - min(called),
        to_synthesis=timeline.started[SYNTHESIZER] - max(answered),
        synthesis=timeline.ended[SYNTHESIZER] - timeline.started[SYNTHESIZER],
        to_done=completed - timeline.ended[SYNTHESIZER],
        to_seen=seen - completed,
        awaiting_seen=None if awaiting_seen is None else awaiting_seen - max(answered),
        confirm_call=None
        if confirmed is None or awaiting_seen is None
        else confirmed - awaiting_seen,
        polls=polls,
        cpu_wait=waited,
        app_statements=app1 - app0,
        system_statements=system1 - system0 if statements.attached else None,
    )
    await asyncio.sleep(pause)  # the workflows' own ends are saved after the research's
    clock = _Clock(wall_clock0, t0, precise_workflow_times)
    run.path, run.claims = await critical_path(
        str(draft.id),
        timeline,
        clock,
        t0=t0,
        awaiting=awaiting_seen,
        confirmed=confirmed,
        seen=seen,
    )
    return run


@dataclass(frozen=True)
class _Clock:
    """Epoch times (DBOS's, in ms) on the monotonic clock of the run."""

    wall0: float
    mono0: float
    precise_workflow_times: bool

    def at(self, epoch_ms: int | None) -> float:
        if epoch_ms is None:
            return float("nan")
        return epoch_ms / 1000 - self.wall0 + self.mono0


async def critical_path(
    research_id: str,
    timeline: Timeline,
    clock: _Clock,
    *,
    t0: float,
    awaiting: float | None,
    confirmed: float | None,
    seen: float,
) -> tuple[list[tuple[str, float]], float | None]:
    """The marks on the way from start() to completed, from DBOS's records of the
    workflows (each step's start and end; enqueued and dequeued times where the system
    database keeps milliseconds), the scripted models' own times and the bench's. The
    call followed is the one recorded last (the one whose record moved the research on);
    each segment is the time since the previous mark. Also the time between the first
    and the last of the five calls' dequeue (None where DBOS keeps only seconds)."""
    from dbos import DBOS

    from scholarstream.research import CALL_QUEUE

    workflows = await DBOS.list_workflows_async(
        workflow_id_prefix=f"research-{research_id}-",
        queue_name=CALL_QUEUE,
        load_input=False,
        load_output=False,
    )
    steps = {
        w.workflow_id: {
            step["function_name"]: step
            for step in await DBOS.list_workflow_steps_async(w.workflow_id, load_output=False)
        }
        for w in workflows
    }

    def step_at(workflow_id: str, name: str, end: bool) -> float | None:
        step = steps[workflow_id].get(name)
        if step is None:
            return None
        return clock.at(step["completed_at_epoch_ms" if end else "started_at_epoch_ms"])

    calls = [w for w in workflows if "-call-" in w.workflow_id]
    synthesis = [w for w in workflows if "-synthesis-" in w.workflow_id]
    if len(calls) != len(MODELS) or len(synthesis) != 1:
        return [], None
    call = max(calls, key=lambda w: step_at(w.workflow_id, "research.call.recorded", True) or 0)
    model = call.workflow_id.split("-call-1-", 1)[1]
    synth = synthesis[0]
    c, s = call.workflow_id, synth.workflow_id
    # DBOS stamps enqueue and dequeue with the database's clock: whole seconds on SQLite
    # before Python 3.12 (strftime('%s')), useless here; milliseconds on PostgreSQL.
    precise = clock.precise_workflow_times
    marks: list[tuple[str, float | None]] = [
        ("start() called", t0),
        ("call enqueued", clock.at(call.created_at) if precise else None),
        ("call dequeued", clock.at(call.dequeued_at) if precise else None),
        ("call 'started' step begun", step_at(c, "research.call.started", False)),
        ("call 'started' step done", step_at(c, "research.call.started", True)),
        ("call 'model' step begun", step_at(c, "research.call.model", False)),
        ("provider called", timeline.started[model]),
        (WORK_PROVIDER, timeline.ended[model]),
        ("call 'model' step done", step_at(c, "research.call.model", True)),
        ("call 'recorded' step begun", step_at(c, "research.call.recorded", False)),
        ("call 'recorded' step done", step_at(c, "research.call.recorded", True)),
    ]
    if awaiting is None:
        # The call enqueues the synthesis itself, as a step of its workflow.
        marks.append(("synthesis enqueued", step_at(c, "research_synthesis_workflow", True)))
    else:
        marks += [
            ("awaiting_confirmation seen", awaiting),
            ("synthesis enqueued", clock.at(synth.created_at) if precise else None),
            ("confirm(proceed) returned", confirmed),
        ]
    marks += [
        ("synthesis dequeued", clock.at(synth.dequeued_at) if precise else None),
        ("synth 'prompt' step begun", step_at(s, "research.synthesis.prompt", False)),
        ("synth 'prompt' step done", step_at(s, "research.synthesis.prompt", True)),
        ("synth 'model' step begun", step_at(s, "research.synthesis.model", False)),
        ("synthesis model called", timeline.started[SYNTHESIZER]),
        (WORK_SYNTHESIS, timeline.ended[SYNTHESIZER]),
        ("synth 'model' step done", step_at(s, "research.synthesis.model", True)),
        ("synth 'recorded' step begun", step_at(s, "research.synthesis.recorded", False)),
        ("synth 'recorded' step done", step_at(s, "research.synthesis.recorded", True)),
        ("completed seen by the bench", seen),
    ]
    known = [(name, at) for name, at in marks if at is not None]
    dequeued = [w.dequeued_at for w in calls if w.dequeued_at is not None]
    claims = (max(dequeued) - min(dequeued)) / 1000 if precise and dequeued else None
    return [(name, at - known[i][1]) for i, (name, at) in enumerate(known[1:])], claims


def _check(research: Any, scenario: str, timeline: Timeline) -> None:
    """The run did what the scenario says, with the scripted models only, each called once."""
    from scholarstream.research.core import LLMResultStatus

    expected_calls = Counter({name: 1 for name in (*MODELS, SYNTHESIZER)})
    if timeline.calls != expected_calls:
        raise BenchError(f"{scenario}: scripted calls {dict(timeline.calls)}, not one each")
    statuses = {r.model: r.status for r in research.llm_results}
    for model in MODELS:
        failed = scenario == "one-failed" and model == FAILING_MODEL
        want = LLMResultStatus.FAILED if failed else LLMResultStatus.COMPLETED
        if statuses.get(model) != want:
            raise BenchError(f"{scenario}: {model} is {statuses.get(model)}, not {want}")
    if research.synthesized_result != f"Answer of {SYNTHESIZER}.":
        raise BenchError(f"{scenario}: unexpected synthesis {research.synthesized_result!r}")


# --- the engine ------------------------------------------------------------------------------


def bench_settings(data_dir: Path, database_url: str | None, timeout: float) -> Settings:
    from scholarstream.settings import load_settings

    providers = {
        provider: {"api_key": f"bench-dummy-key-{provider}", "base_url": DUMMY_BASE_URL}
        for provider in (*PROVIDERS, SYNTHESIZER.split(":")[0])
    }
    overrides: dict[str, Any] = {
        "data_dir": data_dir,
        "llm": {"providers": providers, "timeout_seconds": timeout},
        "engine": {"executor_id": f"bench-research-run-{os.getpid()}"},
    }
    if database_url:
        overrides["database_url"] = database_url
    return load_settings(None, **overrides)


class _Problems(logging.Handler):
    """Keeps the WARNING+ records logged during the benchmark (DBOS's queue contention ...)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()}"[:300])


@dataclass
class Scenario:
    name: str
    warmup: list[Run]
    runs: list[Run]


async def bench(
    settings: Settings, args: argparse.Namespace, problems: _Problems
) -> list[Scenario]:
    from dbos import DBOS

    from scholarstream.accounts import create_user
    from scholarstream.bootstrap import build_engine
    from scholarstream.db import Database, upgrade_async
    from scholarstream.durable import QUEUES
    from scholarstream.gc_tuning import tune_for_serving
    from scholarstream.research import CALL_QUEUE, ResearchService
    from scholarstream.runtime import build_runtime

    await upgrade_async(settings.app_database_url)
    providers = ScriptedProviders(args.provider_delay, args.synthesis_delay)
    runtime = build_runtime(settings, model_overrides=providers.overrides())
    engine = build_engine(runtime, name="scholarstream-bench")
    DBOS.destroy(destroy_registry=False)  # one DBOS per process: none may be left over
    await engine.launch()
    watch_database = Database(settings.app_database_url)
    try:
        # DBOS sets its own handlers on its logger; ours sees its warnings too.
        logging.getLogger("dbos").addHandler(problems)
        polling = next(q.polling_interval_sec for q in QUEUES if q.name == CALL_QUEUE)
        if args.diag_queue_polling is not None:
            queue = await DBOS.retrieve_queue_async(CALL_QUEUE)
            assert queue is not None
            await queue.set_polling_interval_sec_async(args.diag_queue_polling)
            polling = args.diag_queue_polling
        statements = StatementCounter()
        statements.attach(runtime.database.engine)
        tune_for_serving()
        async with runtime.database.session() as session:
            user = await create_user(session, f"bench-{uuid.uuid4().hex[:8]}", "bench password 1")

        def service_on(database: Database) -> ResearchService:
            return ResearchService(
                database,
                models=runtime.models,
                credentials=runtime.credentials,
                llm=runtime.llm,
                settings=runtime.settings.research,
            )

        service = service_on(runtime.database)
        # The bench's polls on a database handle of their own: not counted as the
        # engine's statements, not taking the engine's pooled connections.
        watcher = service_on(watch_database)
        results = []
        for scenario in args.scenarios:
            warm: list[Run] = []
            measured: list[Run] = []
            for i in range(args.warmup + args.runs):
                run = await run_once(
                    service,
                    watcher,
                    user.id,
                    providers,
                    scenario,
                    poll=args.poll,
                    give_up_after=args.provider_delay + args.synthesis_delay + 60,
                    # A random phase against the queue's polling: start() comes at any time.
                    pause=args.pause + random.uniform(0, polling),
                    precise_workflow_times=settings.is_postgres or sys.version_info >= (3, 12),
                    statements=statements,
                )
                (warm if i < args.warmup else measured).append(run)
                label = "warm-up" if i < args.warmup else f"run {i - args.warmup + 1}"
                print(
                    f"  {scenario:<10} {label:<8} wall {run.wall:6.3f} s  "
                    f"overhead {run.overhead:+.3f} s  cpu wait {run.cpu_wait:.3f} s",
                    flush=True,
                )
                if blocked:
                    raise BenchError(f"a connection outside the loopback was tried: {blocked}")
            results.append(Scenario(scenario, warm, measured))
        return results
    finally:
        logging.getLogger("dbos").removeHandler(problems)
        await engine.shutdown()
        DBOS.destroy(destroy_registry=False)
        await watch_database.dispose()
        await runtime.close()


def _run_async(coroutine: Coroutine[Any, Any, T]) -> tuple[T, str]:
    """On uvloop when installed, as ``scholarstream serve`` (uvicorn) runs."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine), "asyncio"
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine), "uvloop"


# --- report ----------------------------------------------------------------------------------


def _quantiles(values: Sequence[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def contention_fit(runs: Sequence[Run]) -> tuple[float, float, float] | None:
    """Overhead against cpu wait, fitted by least squares: (intercept, slope, r)."""
    waits = [r.cpu_wait for r in runs]
    overheads = [r.overhead for r in runs]
    if len(runs) < 3 or len(set(waits)) < 2 or len(set(overheads)) < 2:
        return None
    slope, intercept = statistics.linear_regression(waits, overheads)
    return intercept, slope, statistics.correlation(waits, overheads)


def verdict(scenario: Scenario, target: float) -> bool:
    return max(r.overhead for r in scenario.runs) < target


def print_tables(scenarios: Sequence[Scenario], backend: str, target: float) -> None:
    print()
    print(DEFINITIONS)
    print()
    print(f"backend: {backend}   (seconds; min / p50 / max over the measured runs)")
    header = (
        f"{'scenario':<11}{'runs':>5}{'ideal':>7}   {'wall min':>8}{'p50':>7}{'max':>7}   "
        f"{'overhead min':>12}{'p50':>7}{'max':>7}   target < {target:g} s"
    )
    print(header)
    print("-" * len(header))
    for scenario in scenarios:
        runs = scenario.runs
        wall = _quantiles([r.wall for r in runs])
        over = _quantiles([r.overhead for r in runs])
        print(
            f"{scenario.name:<11}{len(runs):>5}{runs[0].ideal:>7.2f}   "
            f"{wall[0]:>8.3f}{wall[1]:>7.3f}{wall[2]:>7.3f}   "
            f"{over[0]:>12.3f}{over[1]:>7.3f}{over[2]:>7.3f}   "
            f"{'PASS' if verdict(scenario, target) else 'FAIL'}"
        )
    for scenario in scenarios:
        fit = contention_fit(scenario.runs)
        if fit is not None:
            intercept, slope, r = fit
            print(
                f"{scenario.name}: overhead ~ {intercept:.3f} s + {slope:.3f} x cpu wait "
                f"(least squares over the runs, r = {r:.2f}): {intercept:.3f} s extrapolated "
                "to a machine of our own"
            )
    for scenario in scenarios:
        for i, run in enumerate(scenario.warmup):
            print(
                f"(warm-up {i + 1} of {scenario.name}, not counted: wall {run.wall:.3f}, "
                f"overhead {run.overhead:+.3f})"
            )
    print()
    print("phases (p50, seconds)")
    header = (
        f"{'scenario':<11}{'start()':>8}{'pickup 1st':>11}{'last':>7}{'claims':>7}{'calls':>7}"
        f"{'->synth':>8}{'..seen':>7}{'confirm':>8}{'synth':>7}{'->done':>7}{'->seen':>7}"
        f"{'cpu wait':>9}{'app SQL':>8}{'DBOS SQL':>9}"
    )
    print(header)
    print("-" * len(header))
    for scenario in scenarios:
        runs = scenario.runs
        print(
            f"{scenario.name:<11}"
            f"{_s(_median([r.start_call for r in runs])):>8}"
            f"{_s(_median([r.first_pickup for r in runs])):>11}"
            f"{_s(_median([r.last_pickup for r in runs])):>7}"
            f"{_s(_median([r.claims for r in runs])):>7}"
            f"{_s(_median([r.calls for r in runs])):>7}"
            f"{_s(_median([r.to_synthesis for r in runs])):>8}"
            f"{_s(_median([r.awaiting_seen for r in runs])):>7}"
            f"{_s(_median([r.confirm_call for r in runs])):>8}"
            f"{_s(_median([r.synthesis for r in runs])):>7}"
            f"{_s(_median([r.to_done for r in runs])):>7}"
            f"{_s(_median([r.to_seen for r in runs])):>7}"
            f"{_s(_median([r.cpu_wait for r in runs])):>9}"
            f"{_count(_median([r.app_statements for r in runs])):>8}"
            f"{_count(_median([r.system_statements for r in runs])):>9}"
        )


def print_paths(scenarios: Sequence[Scenario]) -> None:
    for scenario in scenarios:
        paths = [r.path for r in scenario.runs if r.path]
        names = [name for name, _ in paths[0]] if paths else []
        if not paths or any([name for name, _ in p] != names for p in paths):
            print(f"\n(no critical path for {scenario.name}: the workflows were not all found)")
            continue
        print(f"\ncritical path, {scenario.name} (ms; each segment ends at the mark named)")
        print(f"  {'segment ->':<36}{'min':>8}{'p50':>8}{'max':>8}")
        for i, name in enumerate(names):
            low, mid, high = _quantiles([p[i][1] * 1000 for p in paths])
            work = name in (WORK_PROVIDER, WORK_SYNTHESIS)
            label = f"{name} (model's own time)" if work else name
            print(f"  {label:<36}{low:>8.1f}{mid:>8.1f}{high:>8.1f}")
        engine = [
            sum(ms for name, ms in p if name not in (WORK_PROVIDER, WORK_SYNTHESIS)) * 1000
            for p in paths
        ]
        low, mid, high = _quantiles(engine)
        print(f"  {'everything but the models':<36}{low:>8.1f}{mid:>8.1f}{high:>8.1f}")


def _scenarios(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in SCENARIOS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(SCENARIOS)}")
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="measured runs per scenario")
    parser.add_argument(
        "--warmup", type=int, default=1, help="runs per scenario before measuring, not counted"
    )
    parser.add_argument("--provider-delay", type=float, default=2.0, help="seconds per provider")
    parser.add_argument(
        "--synthesis-delay", type=float, default=0.5, help="seconds of the synthesis model"
    )
    parser.add_argument(
        "--scenarios",
        type=_scenarios,
        default=list(SCENARIOS),
        help=f"comma-separated, of {', '.join(SCENARIOS)}",
    )
    parser.add_argument(
        "--database-url",
        help="a PostgreSQL server, e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/test: a "
        "throwaway database is created on it and dropped after (default: SQLite in a "
        "temporary data directory)",
    )
    parser.add_argument("--poll", type=float, default=0.01, help="seconds between get() polls")
    parser.add_argument(
        "--pause",
        type=float,
        default=0.3,
        help="seconds between runs, plus a random part of up to the queue's polling interval",
    )
    parser.add_argument("--target", type=float, default=TARGET_OVERHEAD_SECONDS)
    parser.add_argument(
        "--diag-queue-polling",
        type=float,
        metavar="SECONDS",
        help="DIAGNOSTIC, not what the product does: set the llm-calls queue's polling "
        "interval (the product's: 0.25 s) after launch, to measure its share of the overhead",
    )
    parser.add_argument(
        "--json",
        type=Path,
        help="the figures as JSON (default bench/results/research_run.<backend>.json)",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    # The developer's own configuration never leaks in (as in the tests).
    for name in list(os.environ):
        if name.startswith("SCHOLARSTREAM_") or name.endswith("_API_KEY"):
            del os.environ[name]
    forbid_network()
    problems = _Problems()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger().addHandler(problems)

    backend = "postgresql" if args.database_url else "sqlite"
    json_path: Path = args.json or Path(f"bench/results/research_run.{backend}.json")
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="research-run-")))
        database_url = (
            stack.enter_context(throwaway_postgres_database(args.database_url, "ss_bench_research"))
            if args.database_url
            else None
        )
        settings = bench_settings(tmp / "data", database_url, timeout=60 + args.provider_delay)
        print(
            f"{backend}: {len(MODELS)} providers x {args.provider_delay:g} s, synthesis "
            f"{args.synthesis_delay:g} s; {args.warmup} warm-up + {args.runs} runs per scenario",
            flush=True,
        )
        if args.diag_queue_polling is not None:
            print(
                f"DIAGNOSTIC: the llm-calls queue polls every {args.diag_queue_polling:g} s "
                "(not the product's setting): the figures are not results of the product",
                flush=True,
            )
        load_before = os.getloadavg()[0]
        scenarios, loop = _run_async(bench(settings, args, problems))
        load_after = os.getloadavg()[0]

    label = f"{backend} ({loop}, {os.cpu_count()} CPUs)"
    if args.diag_queue_polling is not None:
        label += f", DIAGNOSTIC llm-calls polling {args.diag_queue_polling:g} s"
    print_tables(scenarios, label, args.target)
    print_paths(scenarios)
    print(
        f"\nload average (1 min) before: {load_before:.2f}, after: {load_after:.2f} "
        f"on {os.cpu_count()} CPUs shared with other work: the figures are noisy"
    )
    print(
        "\nnetwork: no connection outside the loopback was attempted"
        if not blocked
        else f"\nnetwork: BLOCKED attempts {blocked}"
    )
    if problems.lines:
        print(f"\n{len(problems.lines)} warnings/errors were logged; the first:")
        for line in problems.lines[:10]:
            print("  " + line)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "definitions": DEFINITIONS,
        "settings": {
            "backend": backend,
            "loop": loop,
            "providers": list(MODELS),
            "synthesizer": SYNTHESIZER,
            "failing_model": FAILING_MODEL,
            "provider_delay_seconds": args.provider_delay,
            "synthesis_delay_seconds": args.synthesis_delay,
            "runs": args.runs,
            "warmup": args.warmup,
            "poll_seconds": args.poll,
            "pause_seconds": args.pause,
            "diagnostic_queue_polling_seconds": args.diag_queue_polling,
            "target_overhead_seconds": args.target,
            "cpus": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": load_after,
            "python": platform.python_version(),
        },
        "scenarios": [
            {
                "name": s.name,
                "passed": verdict(s, args.target),
                "warmup": [asdict(r) for r in s.warmup],
                "runs": [asdict(r) for r in s.runs],
                "overhead_vs_cpu_wait": contention_fit(s.runs),
            }
            for s in scenarios
        ],
        "logged_problems": problems.lines[:50],
    }
    json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {json_path}")


if __name__ == "__main__":
    main()
