"""The rule of exclusion reasons, over the HTTP API of a live server on SQLite and
PostgreSQL. A project with exclusion criteria takes one of them as every exclusion's
reason; a project with none excludes without a reason and refuses one (it could never be
counted by a criterion). Adding criteria later is never blocked by the exclusions made
before; removing a criterion that exclusions give is. PRISMA counts the exclusions without
a reason as "No reason given", and the exports leave their reason empty. No other decision
takes a reason: one sent with it is refused, not dropped."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx

from scholarstream.settings import Settings
from tests.screening.api import API, client_for, import_review, new_project, refused
from tests.screening.world import svg_words

OFF_TOPIC = "Off topic"


def _exclude(
    client: httpx.Client, pid: str, step: dict[str, Any], reason: str | None = None
) -> httpx.Response:
    body = {"record_id": step["record"]["id"], "decision": "exclude", "reason": reason}
    return client.post(f"{API}/{pid}/decisions", json=body)


def test_without_criteria_exclusions_take_no_reason_and_criteria_can_come_later(
    db_settings: Settings,
) -> None:
    with client_for(db_settings) as (_, client):
        import_review(client)
        project = new_project(client, exclusion_criteria=[])
        pid = project["id"]
        step = client.get(f"{API}/{pid}/next").json()
        first = step["record"]["id"]

        # No criteria: a reason is refused (nothing recorded); no reason is the rule.
        refused(
            _exclude(client, pid, step, "whatever"),
            422,
            "This project has no exclusion criteria, so an exclusion takes no reason",
            "“whatever” was not recorded",
            "add the reasons to the project's exclusion criteria",
        )
        assert client.get(f"{API}/{pid}/progress").json()["screened"] == 0
        # Nor does any other decision take one: refused, not dropped.
        for decision in ("include", "maybe"):
            body = {"record_id": first, "decision": decision, "reason": "looks relevant"}
            refused(
                client.post(f"{API}/{pid}/decisions", json=body),
                422,
                "Only an exclusion takes a reason: “looks relevant” was not recorded.",
            )
        assert client.get(f"{API}/{pid}/progress").json()["screened"] == 0
        excluded = _exclude(client, pid, step)
        assert excluded.status_code == 200, excluded.text
        step = excluded.json()
        assert step["message"].startswith("Exclude: ")

        # Criteria added afterwards: never blocked by the exclusions made before them.
        added = client.patch(f"{API}/{pid}", json={"exclusion_criteria": [OFF_TOPIC]})
        assert added.status_code == 200, added.text
        assert added.json()["exclusion_criteria"] == [OFF_TOPIC]

        # From now on an exclusion takes one of them (any case), and only one of them.
        refused(_exclude(client, pid, step), 422, "needs a reason", OFF_TOPIC)
        refused(
            _exclude(client, pid, step, "whatever"),
            422,
            "“whatever” is not one of the project's exclusion criteria",
            f"Pick one of: {OFF_TOPIC}",
        )
        second = step["record"]["id"]
        assert _exclude(client, pid, step, "off TOPIC").status_code == 200

        # The criterion in use stays (singular agreement); others come and go freely.
        refused(
            client.patch(f"{API}/{pid}", json={"exclusion_criteria": ["Wrong population"]}),
            409,
            f"The criteria were not changed: “{OFF_TOPIC}” is the reason of 1 exclusion.",
        )
        more = client.patch(
            f"{API}/{pid}", json={"exclusion_criteria": [OFF_TOPIC, "Wrong population"]}
        )
        assert more.status_code == 200, more.text
        fewer = client.patch(f"{API}/{pid}", json={"exclusion_criteria": [OFF_TOPIC]})
        assert fewer.status_code == 200, fewer.text

        # The records list, PRISMA and the exports: the first exclusion has no reason.
        rows = client.get(f"{API}/{pid}/records", params={"decision": "exclude"}).json()
        assert {r["record_id"]: r["your_reason"] for r in rows["records"]} == {
            first: None,
            second: OFF_TOPIC,
        }
        counts = client.get(f"{API}/{pid}/prisma").json()
        assert counts["excluded"] == 2
        assert sorted((r["reason"], r["records"]) for r in counts["excluded_reasons"]) == [
            ("No reason given", 1),
            (OFF_TOPIC, 1),
        ]
        words = svg_words(client.get(f"{API}/{pid}/prisma/diagram").text)
        assert "No reason given (n = 1)" in words and f"{OFF_TOPIC} (n = 1)" in words
        table = client.get(f"{API}/{pid}/prisma/diagram", params={"format": "csv"}).text
        assert ["screening", "Records excluded: No reason given", "1"] in list(
            csv.reader(io.StringIO(table.removeprefix("\ufeff")))
        )
        exported = client.get(f"{API}/{pid}/export", params={"format": "csv"}).text
        reasons = {
            r["record_id"]: (r["decision"], r["reason"])
            for r in csv.DictReader(io.StringIO(exported.removeprefix("\ufeff")))
        }
        assert reasons[first] == ("exclude", "")
        assert reasons[second] == ("exclude", OFF_TOPIC)
