"""A screening project made from a search run's results and from a stream report's items,
over the HTTP API of a live server with the durable engine (recorded source answers), on
SQLite and PostgreSQL: the records are the run's (the report's), and PRISMA's
identification has each source's count and the duplicates removed before screening."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest

from scholarstream.settings import Settings
from tests.screening.api import API, new_project, refused
from tests.search.world import QUESTION, LiteratureWorld
from tests.streams.test_runs_api import new_stream, run_now
from tests.web.live import serve

SOURCES = ["pubmed", "openalex", "semantic_scholar", "arxiv"]
LABELS = {
    "pubmed": "PubMed",
    "openalex": "OpenAlex",
    "semantic_scholar": "Semantic Scholar",
    "arxiv": "arXiv",
}
WAIT_SEC = 60.0


def _wait(client: httpx.Client, run_id: str, checkpoint: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SEC
    while True:
        run: dict[str, Any] = client.get(f"/api/v1/search/runs/{run_id}").json()
        if run["status"] == "waiting" and (run.get("pending") or {}).get("id") == checkpoint:
            return run
        if run["status"] in ("failed", "completed", "cancelled"):
            pytest.fail(f"the run ended {run['status']}: {run.get('error')}")
        assert time.monotonic() < deadline, f"the run never reached {checkpoint}: {run}"
        time.sleep(0.1)


def test_projects_from_a_search_run_and_a_stream_report(db_settings: Settings) -> None:
    world = LiteratureWorld(failing=("openalex",))  # a failed source identified nothing
    with (
        serve(db_settings, source_transport=world.transport(), engine=True) as live,
        httpx.Client(
            base_url=live.base_url, timeout=60, headers={"Origin": live.base_url}
        ) as client,
    ):
        started = client.post(
            "/api/v1/search/runs", json={"question": QUESTION, "sources": SOURCES}
        )
        assert started.status_code == 202, started.text
        run_id = started.json()["id"]
        _wait(client, run_id, "0-strategy_confirmation")
        # Before it has results, a run cannot make a project.
        refused(
            client.post(
                API,
                json={"name": "Too early", "source": {"kind": "search_run", "run_id": run_id}},
            ),
            409,
            "no results to screen yet",
        )
        decided = client.post(
            f"/api/v1/search/runs/{run_id}/decisions",
            json={"checkpoint_id": "0-strategy_confirmation", "action": "approve"},
        )
        assert decided.status_code == 202, decided.text
        run = _wait(client, run_id, "0-result_review")
        collection = run["collection"]

        project = new_project(client, source={"kind": "search_run", "run_id": run_id})
        papers = collection["papers"]
        assert project["record_count"] == len(papers) > 0
        assert project["origin"] == {
            "kind": "search_run",
            "reference": run_id,
            "label": f"Search run: {QUESTION}",
        }
        identification = project["identification"]
        returned = {
            LABELS[s["source"]]: s["returned"] for s in collection["source_statuses"] if s["ok"]
        }
        assert {s["source"]: s["records"] for s in identification["sources"]} == returned
        assert identification["duplicates_removed"] == collection["stats"]["duplicates_removed"]
        listed = client.get(f"{API}/{project['id']}/records", params={"limit": 500}).json()
        assert listed["total"] == len(papers) <= 500
        titles = {r["title"] for r in listed["records"]}
        assert titles == {p["record"]["title"] for p in papers}
        counts = client.get(f"{API}/{project['id']}/prisma").json()
        assert counts["identified_total"] == sum(returned.values())

        stream = new_stream(client)
        report = run_now(client, f"/api/v1/streams/{stream['id']}")
        items = report["report"]["items"]
        from_report = new_project(
            client,
            name="From the stream's report",
            source={"kind": "stream_report", "stream_id": stream["id"], "report_id": report["id"]},
        )
        assert from_report["record_count"] == len(items) > 0
        assert from_report["origin"]["kind"] == "stream_report"
        assert from_report["origin"]["label"].startswith(f"Stream report: {stream['stream_name']}")
        report_counts = report["report"]["counts"]
        identified = from_report["identification"]
        assert sum(s["records"] for s in identified["sources"]) == report_counts["found"]
        assert "OpenAlex" not in {s["source"] for s in identified["sources"]}
        assert "OpenAlex" not in {s["source"] for s in identification["sources"]}
        assert identified["duplicates_removed"] == report_counts["duplicates_dropped"]

        # A second run reports nothing new: no project can be made of it.
        empty = run_now(client, f"/api/v1/streams/{stream['id']}")
        refused(
            client.post(
                API,
                json={
                    "name": "Nothing",
                    "source": {
                        "kind": "stream_report",
                        "stream_id": stream["id"],
                        "report_id": empty["id"],
                    },
                },
            ),
            409,
            "no items to screen",
        )
        # The New project form offers the report with items, saying how many, and leaves the
        # empty one out: there is nothing in it to screen.
        page = client.get("/screening")
        assert page.status_code == 200, page.text
        offered = re.findall(r'<option value="([^"/]+)/([^"]+)">([^<]*)</option>', page.text)
        assert [(s, r) for s, r, _ in offered] == [(stream["id"], report["id"])]
        assert offered[0][2].endswith(f"({len(items)} record{'s' if len(items) != 1 else ''})")
