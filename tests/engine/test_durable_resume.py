"""A real crash: a process running a workflow is killed with SIGKILL in the middle of its
second step, and the next launch of the engine finishes the workflow without running the
completed step again. Runs on SQLite and on PostgreSQL (``database_url``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dbos import DBOSClient

from scholarstream.settings import Settings

pytestmark = pytest.mark.slow

HELPER = Path(__file__).with_name("durable_app.py")
WORKFLOW_ID = "durable-resume-test"
# Generous bounds: a healthy run takes a few seconds; these only stop a broken one hanging CI.
START_TIMEOUT_SEC = 60.0
FINISH_TIMEOUT_SEC = 60.0


class Helper:
    """One run of durable_app.py, its output kept in files (a pipe could fill and block it)."""

    def __init__(
        self,
        mode: str,
        settings: Settings,
        out_dir: Path,
        executor: str | None = None,
        grace: float | None = None,
    ) -> None:
        self.mode = mode
        self.stdout_path = out_dir / f"{mode}-{executor}.stdout"
        self.stderr_path = out_dir / f"{mode}-{executor}.stderr"
        command = [
            sys.executable,
            str(HELPER),
            mode,
            "--data-dir",
            str(settings.data_dir),
            "--workflow-id",
            WORKFLOW_ID,
        ]
        if settings.database_url:
            command += ["--database-url", settings.database_url]
        if executor:
            command += ["--executor-id", executor]
        if grace is not None:
            command += ["--grace", str(grace)]
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err)

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return (
            f"--- {self.mode} (pid {self.pid}, exit {self.process.poll()}) stdout:\n"
            f"{self.stdout_path.read_text(errors='replace')}\n"
            f"--- stderr:\n{self.stderr_path.read_text(errors='replace')}"
        )

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                pytest.fail(f"helper exited before {what}\n{self.output()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not happen within {timeout} s\n{self.output()}")
            time.sleep(0.02)

    def wait_exit(self, timeout: float) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
            pytest.fail(f"helper did not exit within {timeout} s\n{self.output()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def run_helper(tmp_path: Path) -> Iterator[Callable[..., Helper]]:
    """Starts helper processes; kills any still alive when the test ends."""
    started: list[Helper] = []

    def start(
        mode: str, settings: Settings, executor: str | None = None, grace: float | None = None
    ) -> Helper:
        helper = Helper(mode, settings, tmp_path, executor, grace)
        started.append(helper)
        return helper

    yield start
    for helper in started:
        helper.stop()


def _events(log: Path) -> list[tuple[int, str, str]]:
    if not log.exists():
        return []
    events = []
    # The helper may be half-way through writing the last line: only complete lines count.
    for line in log.read_text(encoding="utf-8").split("\n")[:-1]:
        pid, step, event = line.split()
        events.append((int(pid), step, event))
    return events


def _killed_in_step_2(
    run_helper: Callable[..., Helper], settings: Settings, *executor_id: str
) -> Helper:
    """Starts the workflow in a helper process, kills it (SIGKILL) once step 2 has started,
    then lets step 2 finish whenever it runs again. The killed helper."""
    log = settings.data_dir / "durable.log"
    first = run_helper("start", settings, *executor_id)
    first.wait_until(
        lambda: any(step == "step2" for _, step, _ in _events(log)),
        "step 2 starting",
        START_TIMEOUT_SEC,
    )
    os.kill(first.pid, signal.SIGKILL)
    assert first.wait_exit(10) == -signal.SIGKILL
    (settings.data_dir / "release").touch()
    return first


def test_killed_workflow_resumes_after_its_last_completed_step(
    db_settings: Settings, run_helper: Callable[..., Helper]
) -> None:
    log = db_settings.data_dir / "durable.log"
    first = _killed_in_step_2(run_helper, db_settings)
    second = run_helper("resume", db_settings)
    assert second.wait_exit(FINISH_TIMEOUT_SEC) == 0, second.output()
    printed = second.stdout_path.read_text().strip().splitlines()
    assert json.loads(printed[-1]) == {"result": ["one", "two", "three"]}

    events = _events(log)
    counts = Counter((step, event) for _, step, event in events)
    assert counts == {
        ("step1", "start"): 1,
        ("step1", "finish"): 1,
        ("step2", "start"): 2,
        ("step2", "finish"): 1,
        ("step3", "start"): 1,
        ("step3", "finish"): 1,
    }, events
    # The killed process got as far as starting step 2; the resumed one did the rest.
    assert events == [
        (first.pid, "step1", "start"),
        (first.pid, "step1", "finish"),
        (first.pid, "step2", "start"),
        (second.pid, "step2", "start"),
        (second.pid, "step2", "finish"),
        (second.pid, "step3", "start"),
        (second.pid, "step3", "finish"),
    ]

    # What DBOS recorded, read back from the system database by an outside client.
    client = DBOSClient(system_database_url=db_settings.system_database_url)
    try:
        status = client.retrieve_workflow(WORKFLOW_ID).get_status()
        assert status.status == "SUCCESS"
        assert status.output == ["one", "two", "three"]
        steps = client.list_workflow_steps(WORKFLOW_ID)
        assert [step["output"] for step in steps] == ["one", "two", "three"]
        # Resuming started no second copy of the workflow.
        runs = client.list_workflows(name=status.name)
        assert [run.workflow_id for run in runs] == [WORKFLOW_ID]
    finally:
        client.destroy()


def test_a_second_process_leaves_running_workflows_alone(
    db_settings: Settings, run_helper: Callable[..., Helper]
) -> None:
    """Several processes share one database (serve + worker, or many workers): a process
    that starts must not take over a workflow another live process is running."""
    log = db_settings.data_dir / "durable.log"
    first = run_helper("start", db_settings, "executor-a")
    first.wait_until(
        lambda: any(step == "step2" for _, step, _ in _events(log)),
        "step 2 starting",
        START_TIMEOUT_SEC,
    )
    # Even with no grace at all: the first process holds its executor's lease.
    second = run_helper("idle", db_settings, "executor-b", grace=0)
    assert second.wait_exit(FINISH_TIMEOUT_SEC) == 0, second.output()
    (db_settings.data_dir / "release").touch()
    assert first.wait_exit(FINISH_TIMEOUT_SEC) == 0, first.output()
    counts = Counter((step, event) for _, step, event in _events(log))
    assert counts[("step2", "start")] == 1, _events(log)
    assert counts[("step3", "finish")] == 1
    assert {pid for pid, _, _ in _events(log)} == {first.pid}


def test_the_work_of_an_executor_that_never_comes_back_is_taken_over(
    db_settings: Settings, run_helper: Callable[..., Helper]
) -> None:
    """A process dies and is not restarted: once it has been gone for the grace period,
    another process (another executor id) resumes its workflow from the step it was in."""
    log = db_settings.data_dir / "durable.log"
    _killed_in_step_2(run_helper, db_settings, "executor-gone")

    other = run_helper("resume", db_settings, "executor-other", grace=1.0)
    assert other.wait_exit(FINISH_TIMEOUT_SEC) == 0, other.output()
    assert json.loads(other.stdout_path.read_text().strip().splitlines()[-1]) == {
        "result": ["one", "two", "three"]
    }
    events = _events(log)
    counts = Counter((step, event) for _, step, event in events)
    assert counts[("step1", "start")] == 1, events
    assert counts[("step2", "start")] == 2, events
    assert counts[("step3", "finish")] == 1, events
    assert {pid for pid, step, _ in events if step == "step3"} == {other.pid}
    client = DBOSClient(system_database_url=db_settings.system_database_url)
    try:
        status = client.retrieve_workflow(WORKFLOW_ID).get_status()
        assert (status.status, status.executor_id) == ("SUCCESS", "executor-other")
    finally:
        client.destroy()
