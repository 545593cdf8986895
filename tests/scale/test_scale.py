"""Scale on PostgreSQL: two ``serve --no-workers`` processes and two ``worker`` processes
on one host share the database's DBOS queues and schedules, each under an executor id of
its own by default.

- A multi-LLM research started through one API process is run by the workers (never by
  the API processes) and read through either API process.
- A worker is killed in the middle of one of its model calls and never comes back: the
  other worker recovers its work once ``engine.recovery_grace_seconds`` have passed, and
  the research completes without asking again the model that had answered.
- The scheduled pass of the streams fires in all four processes but runs once per slot,
  only on workers, and the due stream is run once.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from dbos import DBOSClient, WorkflowStatus

from scholarstream.db import upgrade
from scholarstream.db.tables import StreamReportRow
from scholarstream.durable import is_per_run
from scholarstream.research import call_workflow_id
from scholarstream.settings import Settings, load_settings
from scholarstream.streams.monitoring import run_due_streams_workflow
from tests.fake_openai import FakeOpenAI, Text, fake_openai
from tests.scale.cluster import app_database, cluster, dbos_client, process_env, wait_for
from tests.scale.flows import research, result_of, start_research, stored
from tests.scale.seed import seed_library, seed_stream

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TIMEOUT_SEC = 90.0
GRACE_SEC = 2.0
QUICK, SLOW, SYNTH = "fake:gpt-a", "fake:gpt-b", "fake:synth"
KINDS = ("call", "synthesis")  # the workflows of research_call_workflow_id, synthesis_workflow_id


def _slots(client: DBOSClient) -> list[WorkflowStatus]:
    return client.list_workflows(name=run_due_streams_workflow.__qualname__)


def test_serve_and_worker_processes_share_the_queues_and_schedules(
    postgres_url: str, data_dir: Path, tmp_path: Path
) -> None:
    settings = load_settings(data_dir=data_dir, database_url=postgres_url)
    upgrade(settings.app_database_url)
    owner = asyncio.run(seed_library(settings))
    stream_id = asyncio.run(seed_stream(settings, owner))
    with fake_openai() as fake:
        _run(fake, settings, stream_id, tmp_path)


def _run(fake: FakeOpenAI, settings: Settings, stream_id: uuid.UUID, tmp_path: Path) -> None:
    fake.default("gpt-a", Text("Answer from A"))
    fake.script("gpt-b", Text("never delivered", delay=60))  # its worker dies waiting
    fake.default("gpt-b", Text("Answer from B"))
    fake.default("synth", Text("The synthesis of A and B"))
    fake.default("gpt-c", Text("Answer from C"))
    fake.default("gpt-d", Text("Answer from D"))
    fake.default("synth-cli", Text("The synthesis of C and D"))
    app_url, system_url = settings.app_database_url, settings.system_database_url
    env = process_env(
        settings.data_dir,
        app_url,
        SCHOLARSTREAM_LLM__PROVIDERS__FAKE__BASE_URL=fake.base_url,
        SCHOLARSTREAM_LLM__PROVIDERS__FAKE__API_KEY="k",
        SCHOLARSTREAM_ENGINE__SCHEDULES=json.dumps({"run-due-streams": "*/2 * * * * *"}),
        SCHOLARSTREAM_ENGINE__RECOVERY_GRACE_SECONDS=str(GRACE_SEC),
    )
    host = socket.gethostname()
    with (
        cluster(tmp_path, env) as running,
        app_database(app_url) as db,
        dbos_client(system_url) as client,
    ):
        api_a = running.serve("serve-a", "--no-workers")
        api_b = running.serve("serve-b", "--no-workers")
        workers = [running.worker("worker-1"), running.worker("worker-2")]
        running.wait_ready(api_a, api_b, *workers)

        # Distinct default executor ids: the lowest free slot of each role on this host.
        ids = {p.name: p.executor_id for p in (api_a, api_b, *workers)}
        assert sorted(ids.values()) == sorted(
            [f"{host}-serve-0", f"{host}-serve-1", f"{host}-worker-0", f"{host}-worker-1"]
        ), ids
        worker_ids = {w.executor_id for w in workers}

        research_id = start_research(api_a, [QUICK, SLOW], SYNTH)
        slow_call = call_workflow_id(research_id, SLOW, 1)
        wait_for(
            lambda: (
                result_of(research(api_a, research_id), QUICK)["status"] == "completed"
                and fake.calls("gpt-b") == 1
                and client.retrieve_workflow(slow_call).get_status().executor_id in worker_ids
            ),
            "A answered and B asked by a worker",
            TIMEOUT_SEC,
            running,
        )
        # The worker asking B dies and is not restarted.
        busy = client.retrieve_workflow(slow_call).get_status().executor_id
        (doomed,) = [w for w in workers if w.executor_id == busy]
        (survivor,) = [w for w in workers if w is not doomed]
        doomed.kill()

        done = wait_for(
            lambda: (found := research(api_b, research_id))["status"] == "completed" and found,
            "the research completing on the surviving worker",
            TIMEOUT_SEC,
            running,
        )
        assert (fake.calls("gpt-a"), fake.calls("gpt-b"), fake.calls("synth")) == (1, 2, 1)
        assert [(r["model"], r["status"], r["content"]) for r in done["llmResults"]] == [
            (QUICK, "completed", "Answer from A"),
            (SLOW, "completed", "Answer from B"),
        ]
        assert done["synthesizedResult"] == "The synthesis of A and B"
        assert research(api_a, research_id) == done  # the same through either API process
        kept = stored(db, research_id)
        assert kept.seqs == list(range(1, len(kept.seqs) + 1))
        assert kept.completed_models == {QUICK: 1, SLOW: 1}
        # Workers ran every call and the synthesis; the interrupted call was finished by
        # the survivor, after the grace period.
        runs = {
            s.workflow_id: s
            for s in client.list_workflows(
                workflow_id_prefix=[f"research-{research_id}-{kind}-" for kind in KINDS]
            )
        }
        assert len(runs) == 3
        assert {s.status for s in runs.values()} == {"SUCCESS"}
        assert {s.executor_id for s in runs.values()} <= worker_ids
        assert runs[slow_call].executor_id == survivor.executor_id
        # Some process still running (a worker or an API process) put it back on its queue.
        recovery = re.compile(rf"executor {busy} is gone: recovered its \d+ interrupted")
        assert any(recovery.search(p.text()) for p in (api_a, api_b, survivor)), running.outputs()

        # A 'scholarstream research' command: its own engine, with an id for this run only,
        # working only the llm-calls queue (with the workers: it may run any research's
        # calls, which is why it starts only now), while the schedule goes on firing.
        cli = running.command(
            "research-cli",
            "research",
            "run",
            "What is known about tirzepatide in adolescents?",
            "--models",
            "fake:gpt-c,fake:gpt-d",
            "--synthesis",
            "fake:synth-cli",
            "--on-partial-failure",
            "proceed",
            # A command logs only warnings unless asked: its queue line is an INFO line.
            SCHOLARSTREAM_LOGGING__LEVEL="INFO",
        )

        # The CLI's research completed, and its engine ran no scheduled workflow.
        wait_for(lambda: cli.popen.poll() is not None, "the research command", TIMEOUT_SEC)
        assert cli.popen.returncode == 0, cli.output()
        assert "Answer from C" in cli.text()
        assert "Answer from D" in cli.text()
        assert "The synthesis of C and D" in cli.text()
        assert "queues: llm-calls)" in cli.text()
        cli_id = cli.executor_id
        assert is_per_run(cli_id) and cli_id.startswith(f"{host}-cli-"), cli_id

        # The stream: due once, run once, by one scheduled pass, on a worker.
        reports = sa.select(StreamReportRow.status).where(StreamReportRow.stream_id == stream_id)

        def statuses() -> list[str]:
            with db.connect() as conn:
                return list(conn.scalars(reports))

        wait_for(lambda: statuses() == ["complete"], "the stream's report", TIMEOUT_SEC, running)
        seen = len([s for s in _slots(client) if s.status == "SUCCESS"])
        wait_for(
            lambda: len([s for s in _slots(client) if s.status == "SUCCESS"]) > seen,
            "another slot of the schedule",
            TIMEOUT_SEC,
            running,
        )
        assert statuses() == ["complete"]
        slots = _slots(client)
        assert len({s.workflow_id for s in slots}) == len(slots)  # one workflow per slot
        assert {s.executor_id for s in slots if s.status == "SUCCESS"} <= worker_ids
        assert not any(s.executor_id == cli_id for s in slots)
