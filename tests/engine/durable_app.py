"""A tiny ScholarStream process for the crash test in ``test_durable_resume.py``.

Run it as a script with the project's interpreter::

    python durable_app.py start  --data-dir DIR --workflow-id ID [--database-url URL]
    python durable_app.py resume --data-dir DIR --workflow-id ID [--database-url URL]
    python durable_app.py idle   --data-dir DIR --workflow-id ID --executor-id OTHER
    python durable_app.py resume ... --executor-id OTHER --grace SECONDS

``idle`` is a second process sharing the database under another executor id: it launches
the engine, stays up for a few seconds (long enough for any recovery at launch to start),
and must leave the workflow ``ID``, which another live process is running, alone.
``resume`` under another executor id is a process taking over the work of one that never
comes back (after ``--grace`` seconds, ``engine.recovery_grace_seconds``).

Both modes build the product's settings for DIR, launch the product's ``Engine`` and wait
for the workflow ``ID`` to finish. ``start`` starts it; ``resume`` starts nothing and relies
on DBOS recovering the pending workflow during launch, then only looks it up.

The workflow has three steps. Each appends ``<pid> <step> start`` and ``<pid> <step> finish``
to ``DIR/durable.log``; the second step blocks until ``DIR/release`` exists. Both modes
import the same workflow code, so both processes have the same DBOS application version
(DBOS only recovers workflows of its own version).

Every wait is bounded, so a broken engine makes this process fail instead of hang. On
success it prints the workflow result as one JSON line and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID

from scholarstream.bootstrap import build_engine
from scholarstream.runtime import build_runtime
from scholarstream.settings import load_settings

LOG_NAME = "durable.log"
RELEASE_NAME = "release"
# Longest any single wait in this process may take; the test's own timeouts are shorter.
WAIT_LIMIT_SEC = 90.0


def _record(data_dir: str, step: str, event: str) -> None:
    with open(Path(data_dir) / LOG_NAME, "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {step} {event}\n")


@DBOS.step()
async def durable_step_one(data_dir: str) -> str:
    _record(data_dir, "step1", "start")
    _record(data_dir, "step1", "finish")
    return "one"


@DBOS.step()
async def durable_step_two(data_dir: str) -> str:
    _record(data_dir, "step2", "start")
    release = Path(data_dir) / RELEASE_NAME
    deadline = time.monotonic() + WAIT_LIMIT_SEC
    while not release.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{release} did not appear within {WAIT_LIMIT_SEC} s")
        await asyncio.sleep(0.02)
    _record(data_dir, "step2", "finish")
    return "two"


@DBOS.step()
async def durable_step_three(data_dir: str) -> str:
    _record(data_dir, "step3", "start")
    _record(data_dir, "step3", "finish")
    return "three"


@DBOS.workflow()
async def durable_three_steps(data_dir: str) -> list[str]:
    return [
        await durable_step_one(data_dir),
        await durable_step_two(data_dir),
        await durable_step_three(data_dir),
    ]


IDLE_SEC = 4.0


async def run(
    mode: str,
    data_dir: Path,
    workflow_id: str,
    database_url: str | None,
    executor: str | None,
    grace: float | None,
) -> Any:
    engine_settings: dict[str, Any] = {"executor_id": executor}
    if grace is not None:
        engine_settings["recovery_grace_seconds"] = grace
    settings = load_settings(data_dir=data_dir, database_url=database_url, engine=engine_settings)
    runtime = build_runtime(settings)
    engine = build_engine(runtime)
    try:
        await engine.launch()
        if mode == "idle":
            await asyncio.sleep(IDLE_SEC)
            return None
        if mode == "start":
            with SetWorkflowID(workflow_id):
                handle = await DBOS.start_workflow_async(durable_three_steps, str(data_dir))
        else:
            # Raises if the workflow does not exist: resuming must never start one.
            handle = await DBOS.retrieve_workflow_async(workflow_id)
        return await asyncio.wait_for(handle.get_result(), timeout=WAIT_LIMIT_SEC)
    finally:
        await engine.shutdown()
        await runtime.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("mode", choices=["start", "resume", "idle"])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--workflow-id", required=True)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--executor-id", default=None)
    parser.add_argument("--grace", type=float, default=None)
    args = parser.parse_args(argv)
    result = asyncio.run(
        run(
            args.mode,
            args.data_dir,
            args.workflow_id,
            args.database_url,
            args.executor_id,
            args.grace,
        )
    )
    print(json.dumps({"result": result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
