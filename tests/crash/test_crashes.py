"""Crashes of real processes, on SQLite and on PostgreSQL: an API process
(``serve --no-workers``) and a worker (``worker --executor-id crash-worker``) share a
database; each test kills one of them with SIGKILL in the middle of some work, starts it
again with the same command, and checks that the work finishes with nothing lost or done
twice.

- A multi-LLM research: the worker dies after one model answered, while the other is
  still thinking. The answered call is not made again; every answer, event and usage
  record is stored once.
- A scheduled monitoring run of a stream: the worker dies while the model judges what the
  run found. The report is stored once, complete, and no later slot runs the stream again.
- A monitoring run asked for on demand (``POST /streams/{id}/runs``, answered at once by
  the API process, run by the worker on the ``stream-runs`` queue): the worker dies while
  the model judges. The restarted worker resumes the same run: one report, complete.
- A paper search waiting at its strategy checkpoint (seed 003): the API process dies. It
  comes back under the same default executor id, shows the same checkpoint, takes the
  decisions, and the search finishes without redoing its steps.

The processes are started once per backend for the three tests (starting one costs
seconds); a test restarts whatever an earlier one left dead.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from dbos import DBOSClient, WorkflowStatus

from scholarstream.db import upgrade
from scholarstream.db.tables import StreamReportedItemRow, StreamReportRow, StreamRow
from scholarstream.research import call_workflow_id
from scholarstream.search import workflow_id_for
from scholarstream.settings import Settings, load_settings
from scholarstream.streams.monitoring import run_due_streams_workflow, run_workflow_id
from tests.conftest import throwaway_postgres_database
from tests.fake_openai import FakeOpenAI, Text, fake_openai
from tests.scale.cluster import (
    Cluster,
    Process,
    api,
    app_database,
    cluster,
    dbos_client,
    process_env,
    wait_for,
)
from tests.scale.flows import research, result_of, start_research, stored
from tests.scale.seed import TOPICS, seed_library, seed_stream

pytestmark = pytest.mark.slow

TIMEOUT_SEC = 90.0
WORKER_ID = "crash-worker"
QUICK, SLOW, SYNTH = "fake:gpt-a", "fake:gpt-b", "fake:synth"


@dataclass
class Crashable:
    settings: Settings
    fake: FakeOpenAI
    running: Cluster
    db: sa.Engine
    client: DBOSClient
    owner: uuid.UUID
    api: Process
    worker: Process

    def ensure_up(self) -> None:
        """Starts again what an earlier test left dead."""
        restarted = []
        if not self.api.alive:
            self.api = self.running.restart(self.api)
            restarted.append(self.api)
        if not self.worker.alive:
            self.worker = self.running.restart(self.worker)
            restarted.append(self.worker)
        self.running.wait_ready(*restarted)

    def restart_worker(self) -> None:
        self.worker.kill()
        self.worker = self.running.restart(self.worker)
        self.running.wait_ready(self.worker)
        assert self.worker.executor_id == WORKER_ID


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def crashable(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Crashable]:
    directory = tmp_path_factory.mktemp(f"crash-{request.param}")
    data_dir = directory / "data"
    data_dir.mkdir()
    with _database(request, data_dir) as database_url:
        settings = load_settings(data_dir=data_dir, database_url=database_url)
        upgrade(settings.app_database_url)
        owner = asyncio.run(seed_library(settings))
        with fake_openai() as fake:
            env = process_env(
                data_dir,
                database_url,
                SCHOLARSTREAM_LLM__PROVIDERS__FAKE__BASE_URL=fake.base_url,
                SCHOLARSTREAM_LLM__PROVIDERS__FAKE__API_KEY="k",
                # A model for the streams' relevance judgements (research names its models;
                # the search runs offline).
                SCHOLARSTREAM_LLM__ROLES__DEFAULT="fake:judge",
                # The streams' pass every two seconds instead of every five minutes.
                SCHOLARSTREAM_ENGINE__SCHEDULES=json.dumps({"run-due-streams": "*/2 * * * * *"}),
            )
            with (
                cluster(directory, env) as running,
                app_database(settings.app_database_url) as db,
                dbos_client(settings.system_database_url) as client,
            ):
                serve = running.serve("serve", "--no-workers")
                worker = running.worker("worker", "--executor-id", WORKER_ID)
                running.wait_ready(serve, worker)
                yield Crashable(settings, fake, running, db, client, owner, serve, worker)


def _database(request: pytest.FixtureRequest, data_dir: Path) -> AbstractContextManager[str]:
    """The URL of the test's database: SQLite in the data directory, or a throwaway
    PostgreSQL database."""
    if request.param == "sqlite":
        return nullcontext(f"sqlite+aiosqlite:///{data_dir / 'scholarstream.sqlite'}")
    server: str = request.getfixturevalue("postgres_server_url")
    return throwaway_postgres_database(server)


# --- a worker killed between two model calls of a research --------------------------------


def test_a_research_survives_its_worker_being_killed_between_two_calls(
    crashable: Crashable,
) -> None:
    crash, fake = crashable, crashable.fake
    crash.ensure_up()
    fake.default("gpt-a", Text("Answer from A"))
    fake.script("gpt-b", Text("never delivered", delay=60))  # the worker dies waiting
    fake.default("gpt-b", Text("Answer from B"))
    fake.default("synth", Text("The synthesis of A and B"))

    research_id = start_research(crash.api, [QUICK, SLOW], SYNTH)
    wait_for(
        lambda: (
            result_of(research(crash.api, research_id), QUICK)["status"] == "completed"
            and fake.calls("gpt-b") == 1
        ),
        "A answered and B asked",
        TIMEOUT_SEC,
        crash.running,
    )
    crash.restart_worker()
    done = wait_for(
        lambda: (found := research(crash.api, research_id))["status"] == "completed" and found,
        "the research completing",
        TIMEOUT_SEC,
        crash.running,
    )

    # The provider side: A once, B twice (the answer the dead worker never got), the
    # synthesis once.
    assert (fake.calls("gpt-a"), fake.calls("gpt-b"), fake.calls("synth")) == (1, 2, 1)
    # The research: each model's answer once, then the synthesis.
    assert [(r["model"], r["status"], r["attempt"], r["content"]) for r in done["llmResults"]] == [
        (QUICK, "completed", 1, "Answer from A"),
        (SLOW, "completed", 1, "Answer from B"),
    ]
    assert done["synthesizedResult"] == "The synthesis of A and B"
    # Its outbox: one event per change, numbered without gaps or repeats.
    kept = stored(crash.db, research_id)
    assert kept.seqs == list(range(1, len(kept.seqs) + 1))
    assert kept.event_types == {
        "research.started": 1,
        "research.llm_completed": 2,
        "research.synthesizing": 1,
        "research.completed": 1,
    }
    assert kept.completed_models == {QUICK: 1, SLOW: 1}
    # The usage ledger: one answered request per call (the interrupted one never answered,
    # so it was never recorded).
    assert kept.usage_requests == {
        ("research", QUICK): 1,
        ("research", SLOW): 1,
        ("research.synthesis", SYNTH): 1,
    }
    # The interrupted call's workflow was resumed by the restarted worker, which ran its
    # model step again; the API process ran no call.
    for model in (QUICK, SLOW):
        call = _status(crash.client, call_workflow_id(research_id, model, 1))
        assert (call.status, call.executor_id) == ("SUCCESS", WORKER_ID)
    steps = crash.client.list_workflow_steps(call_workflow_id(research_id, SLOW, 1))
    assert [s["function_name"] for s in steps][:4] == [
        "research.call.started",
        "research.call.model",
        "research.call.audit",
        "research.call.recorded",
    ]


# --- a worker killed in the middle of a stream's scheduled run ----------------------------


def _slots(client: DBOSClient) -> list[WorkflowStatus]:
    """The scheduled passes of ``run-due-streams`` so far, one workflow per slot."""
    return client.list_workflows(name=run_due_streams_workflow.__qualname__)


def _succeeded_slots(client: DBOSClient) -> int:
    return sum(1 for s in _slots(client) if s.status == "SUCCESS")


def _statuses(crash: Crashable, stream_id: uuid.UUID) -> list[str]:
    """The statuses of the stream's reports."""
    with crash.db.connect() as conn:
        return list(
            conn.scalars(
                sa.select(StreamReportRow.status).where(StreamReportRow.stream_id == stream_id)
            )
        )


def _assert_reported_once(crash: Crashable, stream_id: uuid.UUID) -> uuid.UUID:
    """One report of the stream, complete, with every library item once; its id."""
    assert _statuses(crash, stream_id) == ["complete"]
    with crash.db.connect() as conn:
        report = conn.execute(
            sa.select(StreamReportRow.id, StreamReportRow.report, StreamReportRow.sources).where(
                StreamReportRow.stream_id == stream_id
            )
        ).one()
        keys = list(
            conn.scalars(
                sa.select(StreamReportedItemRow.key).where(
                    StreamReportedItemRow.stream_id == stream_id
                )
            )
        )
        last_run = conn.scalar(sa.select(StreamRow.last_run_at).where(StreamRow.id == stream_id))
    assert report.report["counts"]["new"] == len(TOPICS)
    assert len(report.report["items"]) == len(TOPICS)
    assert [(s["source"], s["ok"]) for s in report.sources] == [("library", True)]
    assert len(keys) == len(set(keys)) >= len(TOPICS)
    assert last_run is not None
    report_id: uuid.UUID = report.id
    return report_id


def _run_resumed_on_the_worker(crash: Crashable, report_id: uuid.UUID) -> None:
    """The run's workflow succeeded on the worker, once, and ran its one step."""
    workflow = run_workflow_id(report_id)
    status = wait_for(
        lambda: _succeeded(crash.client, workflow),
        "the run's workflow finishing",
        TIMEOUT_SEC,
        crash.running,
    )
    assert status.executor_id == WORKER_ID
    assert [s["function_name"] for s in crash.client.list_workflow_steps(workflow)] == [
        "streams.run"
    ]


def test_a_stream_run_killed_while_judging_is_finished_once_after_a_restart(
    crashable: Crashable,
) -> None:
    crash, fake = crashable, crashable.fake
    crash.ensure_up()
    # The first judgement hangs (the worker dies in it); later ones answer at once, with
    # text the judge cannot use, so the run scores offline what the model did not judge.
    fake.script("judge", Text("judging slowly", delay=60))
    asked = fake.calls("judge")
    stream_id = asyncio.run(seed_stream(crash.settings, crash.owner))  # due at once

    wait_for(lambda: fake.calls("judge") > asked, "the model judging", TIMEOUT_SEC, crash.running)
    assert _statuses(crash, stream_id) == ["running"]
    crash.restart_worker()
    wait_for(
        lambda: "running" not in _statuses(crash, stream_id),
        "the run finishing",
        TIMEOUT_SEC,
        crash.running,
    )
    finished = _succeeded_slots(crash.client)
    # Another slot of the schedule passes: the stream is no longer due.
    wait_for(
        lambda: _succeeded_slots(crash.client) > finished,
        "another slot",
        TIMEOUT_SEC,
        crash.running,
    )
    report_id = _assert_reported_once(crash, stream_id)
    # The judge was asked again by the restarted worker (the first answer never came).
    assert fake.calls("judge") >= asked + 2
    # Every slot's workflow ran once, on the worker; the interrupted one succeeded too.
    slots = _slots(crash.client)
    assert len(slots) == len({s.workflow_id for s in slots})
    assert {s.status for s in slots} <= {"SUCCESS", "ENQUEUED", "PENDING"}
    assert {s.executor_id for s in slots if s.status == "SUCCESS"} == {WORKER_ID}
    # The slot enqueued the run on the stream-runs queue; the restarted worker resumed it.
    _run_resumed_on_the_worker(crash, report_id)


def _stream_off_schedule(crash: Crashable) -> uuid.UUID:
    """A stream that the schedule leaves alone (disabled: runs on demand still run it).
    Created enabled, it may be claimed by a slot before it is disabled: then another."""
    for _ in range(5):
        stream_id = asyncio.run(seed_stream(crash.settings, crash.owner))
        with crash.db.begin() as conn:
            conn.execute(
                sa.update(StreamRow).where(StreamRow.id == stream_id).values(enabled=False)
            )
        # A slot checks in its claim's transaction that the stream is still due.
        if not _statuses(crash, stream_id):
            return stream_id
    pytest.fail("every stream was claimed by the schedule before it was disabled")


def test_a_run_on_demand_killed_while_judging_is_finished_once_after_a_restart(
    crashable: Crashable,
) -> None:
    crash, fake = crashable, crashable.fake
    crash.ensure_up()
    stream_id = _stream_off_schedule(crash)
    fake.script("judge", Text("judging slowly", delay=60))
    asked = fake.calls("judge")

    # The API process answers at once; it works no queue, so the worker runs the run.
    started = api(crash.api, "POST", f"/streams/{stream_id}/runs")
    assert (started["status"], started["report"]) == ("running", None)
    report = f"/streams/{stream_id}/reports/{started['id']}"
    wait_for(lambda: fake.calls("judge") > asked, "the model judging", TIMEOUT_SEC, crash.running)
    assert api(crash.api, "GET", report)["status"] == "running"
    assert _status(crash.client, run_workflow_id(uuid.UUID(started["id"]))).executor_id == (
        WORKER_ID
    )
    crash.restart_worker()
    done = wait_for(
        lambda: (found := api(crash.api, "GET", report))["status"] != "running" and found,
        "the run finishing",
        TIMEOUT_SEC,
        crash.running,
    )

    assert (done["id"], done["status"]) == (started["id"], "complete")
    assert done["started_at"] == started["started_at"]
    assert _assert_reported_once(crash, stream_id) == uuid.UUID(started["id"])
    # The judge was asked again by the restarted worker (the first answer never came).
    assert fake.calls("judge") >= asked + 2
    _run_resumed_on_the_worker(crash, uuid.UUID(started["id"]))


# --- the API process killed while a search waits at a checkpoint --------------------------


def _waiting_at(serve: Process, run_id: str, kind: str) -> dict[str, Any] | None:
    run: dict[str, Any] = api(serve, "GET", f"/search/runs/{run_id}")
    pending = run["pending"]
    if run["status"] == "waiting" and pending and pending["checkpoint"]["kind"] == kind:
        return run
    return None


def _status(client: DBOSClient, workflow_id: str) -> WorkflowStatus:
    return client.retrieve_workflow(workflow_id).get_status()


def _succeeded(client: DBOSClient, workflow_id: str) -> WorkflowStatus | None:
    status = _status(client, workflow_id)
    return status if status.status == "SUCCESS" else None


def test_a_search_waiting_at_a_checkpoint_survives_the_server_being_killed(
    crashable: Crashable,
) -> None:
    crash = crashable
    crash.ensure_up()
    executor = crash.api.executor_id
    run_id = api(
        crash.api,
        "POST",
        "/search/runs",
        # The deterministic skills, the local library as the only source.
        json={
            "question": "natural language processing with machine learning",
            "sources": ["library"],
            "offline": True,
        },
    )["id"]
    before = wait_for(
        lambda: _waiting_at(crash.api, run_id, "strategy_confirmation"),
        "the strategy checkpoint",
        TIMEOUT_SEC,
        crash.running,
    )
    workflow = workflow_id_for(uuid.UUID(run_id))
    killed_at_ms = time.time() * 1000
    crash.api.kill()

    crash.api = again = crash.running.restart(crash.api)
    crash.running.wait_ready(again)
    # The same command on the same host takes the same default id back, so it recovers
    # its own workflows: the run's workflow is taken up again (by it or by the worker)
    # and replays its steps up to the wait for the decision.
    assert again.executor_id == executor
    wait_for(
        lambda: (
            (s := crash.client.retrieve_workflow(workflow).get_status()).status == "PENDING"
            and (s.dequeued_at or 0) > killed_at_ms
        ),
        "the workflow resumed",
        TIMEOUT_SEC,
        crash.running,
    )
    checkpoint = api(again, "GET", f"/search/runs/{run_id}/checkpoint")
    assert checkpoint == before["pending"]
    after = api(again, "GET", f"/search/runs/{run_id}")
    assert after["pending"] == before["pending"]
    # The resumed workflow replays its earlier stages; the run still says it waits.
    assert (after["status"], after["stage"]) == ("waiting", "waiting"), after

    api(
        again,
        "POST",
        f"/search/runs/{run_id}/decisions",
        json={"checkpoint_id": checkpoint["id"], "action": "approve"},
    )
    review = wait_for(
        lambda: _waiting_at(again, run_id, "result_review"),
        "the result review",
        TIMEOUT_SEC,
        crash.running,
    )
    api(
        again,
        "POST",
        f"/search/runs/{run_id}/decisions",
        json={"checkpoint_id": review["pending"]["id"], "action": "approve"},
    )
    done = wait_for(
        lambda: (
            (found := api(again, "GET", f"/search/runs/{run_id}"))["status"] == "completed"
            and found
        ),
        "the search completing",
        TIMEOUT_SEC,
        crash.running,
    )
    titles = {paper["record"]["title"] for paper in done["collection"]["papers"]}
    assert {title for title, _ in TOPICS} <= titles

    # The workflow ran each stage once: what was done before the crash was not redone.
    status = wait_for(
        lambda: _succeeded(crash.client, workflow),
        "the workflow finishing (just after the row it completes)",
        TIMEOUT_SEC,
        crash.running,
    )
    assert status.executor_id in {executor, WORKER_ID}
    names = [step["function_name"] for step in crash.client.list_workflow_steps(workflow)]
    for once in ("search.load", "search.parse", "search.build", "search.search"):
        assert names.count(once) == 1, names
    assert names.count("search.checkpoint") == 2, names
