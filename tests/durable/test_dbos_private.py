"""The adapter around DBOS's private ``_recover_pending_workflows``: the version guard that
refuses to start on a DBOS it was not tested with, and the pins of what it relies on."""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Any

import pytest
from dbos import DBOS

from scholarstream.durable import TESTED_DBOS_MAJOR, check_dbos_version
from scholarstream.errors import EngineError


def test_the_installed_dbos_is_the_tested_major_version_and_passes_the_guard() -> None:
    assert version("dbos").split(".")[0] == str(TESTED_DBOS_MAJOR)
    check_dbos_version()


def test_the_private_recovery_method_takes_a_list_of_executor_ids() -> None:
    # What the engine's recovery of processes gone calls (Engine.recover_abandoned).
    method = DBOS._recover_pending_workflows
    parameters = list(inspect.signature(method).parameters)
    assert parameters == ["executor_ids"]


@pytest.mark.parametrize("installed", ["4.0.0", "2.9.1", "10.1"])
def test_another_major_version_is_refused_at_start_up(installed: str) -> None:
    with pytest.raises(EngineError, match=f"dbos {installed} is installed") as refused:
        check_dbos_version(installed)
    assert refused.value.hint is not None and "dbos>=3.4,<4" in refused.value.hint


def test_a_dbos_without_the_private_method_is_refused() -> None:
    class WithoutRecovery:
        pass

    class OtherSignature:
        @staticmethod
        def _recover_pending_workflows(ids: list[str]) -> list[Any]:
            return []

    for dbos in (WithoutRecovery, OtherSignature):
        with pytest.raises(EngineError, match="_recover_pending_workflows"):
            check_dbos_version("3.4.0", dbos=dbos)
