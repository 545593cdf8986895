"""Two reviewers screen one project blind (multi-user mode, SQLite and PostgreSQL): each
sees only their own decisions and progress; the owner lists the records they decided
differently and settles them; reviewers cannot change the project, see the conflicts or
the PRISMA flow; anyone else gets 404. In single-user mode there is one reviewer."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx

from scholarstream.settings import Settings, load_settings
from tests.helpers import PASSWORD
from tests.screening.api import API, client_for, import_review, new_project, refused
from tests.screening.world import EXCLUSION
from tests.web.live import Account, serve

ACCOUNTS = [Account(name, PASSWORD, name.capitalize()) for name in ("alice", "bob", "carol")]


@contextmanager
def reviewers(settings: Settings) -> Iterator[dict[str, httpx.Client]]:
    """A logged-in client per account on one multi-user server."""
    with serve(settings, ACCOUNTS) as live, ExitStack() as stack:
        clients = {}
        for account in ACCOUNTS:
            client = stack.enter_context(
                httpx.Client(base_url=live.base_url, timeout=60, headers={"Origin": live.base_url})
            )
            response = client.post(
                "/api/v1/auth/login", json={"username": account.username, "password": PASSWORD}
            )
            assert response.status_code == 200, response.text
            clients[account.username] = client
        yield clients


def decide(client: httpx.Client, pid: str, record_id: str, decision: str) -> dict[str, Any]:
    body = {"record_id": record_id, "decision": decision}
    if decision == "exclude":
        body["reason"] = EXCLUSION[1]
    response = client.post(f"{API}/{pid}/decisions", json=body)
    assert response.status_code == 200, response.text
    step: dict[str, Any] = response.json()
    return step


def test_two_reviewers_screen_blind_and_the_owner_settles_conflicts(
    data_dir: object, database_url: str
) -> None:
    settings = load_settings(
        data_dir=data_dir, database_url=database_url, server={"multi_user": True}
    )
    with reviewers(settings) as users:
        alice, bob, carol = users["alice"], users["bob"], users["carol"]
        import_review(alice)
        project = new_project(alice)
        pid = project["id"]

        refused(
            alice.post(f"{API}/{pid}/reviewers", json={"username": "zed"}),
            404,
            "no account named 'zed'",
        )
        refused(alice.post(f"{API}/{pid}/reviewers", json={"username": "alice"}), 409, "owner")
        added = alice.post(f"{API}/{pid}/reviewers", json={"username": "bob"})
        assert added.status_code == 200, added.text
        assert [(r["username"], r["role"]) for r in added.json()["reviewers"]] == [
            ("alice", "owner"),
            ("bob", "reviewer"),
        ]

        # Bob sees the project as a reviewer; Carol does not see it at all.
        assert [(p["id"], p["your_role"]) for p in bob.get(API).json()["projects"]] == [
            (pid, "reviewer")
        ]
        assert carol.get(API).json() == {"projects": []}
        refused(carol.get(f"{API}/{pid}/next"), 404, "was not found")
        refused(carol.post(f"{API}/{pid}/reviewers", json={"username": "carol"}), 404)

        records = [r["record_id"] for r in alice.get(f"{API}/{pid}/records").json()["records"]]
        # Alice includes the first four; Bob agrees on two, disagrees on two, and decides a fifth.
        for record in records[:4]:
            decide(alice, pid, record, "include")
        step = bob.get(f"{API}/{pid}/next").json()
        assert step["progress"]["screened"] == 0  # blind: Alice's decisions are not Bob's
        assert step["your_decision"] is None
        decide(bob, pid, records[0], "include")
        decide(bob, pid, records[1], "include")
        decide(bob, pid, records[2], "exclude")
        decide(bob, pid, records[3], "maybe")
        after = decide(bob, pid, records[4], "exclude")
        assert after["progress"]["screened"] == 5 and after["progress"]["included"] == 2
        assert alice.get(f"{API}/{pid}/progress").json()["screened"] == 4

        # Bob's list shows his own decisions, never the project's outcome.
        bobs = bob.get(f"{API}/{pid}/records").json()["records"]
        assert all(r["outcome"] is None for r in bobs)
        assert [r["your_decision"] for r in bobs[:5]] == [
            "include",
            "include",
            "exclude",
            "maybe",
            "exclude",
        ]
        shown = bob.get(f"{API}/{pid}/records/{records[2]}").json()
        assert shown["your_decision"]["decision"] == "exclude"
        assert shown["your_decision"]["reason"] == EXCLUSION[1]

        # What only the owner may do.
        refused(bob.patch(f"{API}/{pid}", json={"name": "Mine"}), 403, "Only the project's owner")
        refused(bob.get(f"{API}/{pid}/conflicts"), 403, "Only the project's owner")
        refused(bob.get(f"{API}/{pid}/prisma"), 403, "Only the project's owner")
        refused(bob.put(f"{API}/{pid}/conflicts/{records[2]}", json={"decision": "include"}), 403)
        refused(bob.delete(f"{API}/{pid}"), 403, "delete")

        conflicts = alice.get(f"{API}/{pid}/conflicts").json()
        assert [c["record_id"] for c in conflicts["conflicts"]] == records[2:4]
        first = conflicts["conflicts"][0]
        names = first["reviewers"]
        assert sorted((names[d["reviewer_id"]], d["decision"]) for d in first["decisions"]) == [
            ("alice", "include"),
            ("bob", "exclude"),
        ]
        refused(
            alice.put(f"{API}/{pid}/conflicts/{records[2]}", json={"decision": "exclude"}),
            422,
            "needs a reason",
        )
        settled = alice.put(
            f"{API}/{pid}/conflicts/{records[2]}",
            json={"decision": "exclude", "reason": EXCLUSION[1]},
        ).json()
        assert [c["record_id"] for c in settled["conflicts"]] == [records[3]]
        assert settled["resolved"] == 1

        counts = alice.get(f"{API}/{pid}/prisma").json()
        # Agreed includes: records 0 and 1; settled exclusion: record 2; record 3 disagrees;
        # record 4 awaits Alice.
        assert (counts["sought"], counts["excluded"], counts["screened"]) == (2, 1, 5)
        assert counts["undecided"] == {"conflict": 1, "awaiting": 1, "unscreened": 35}

        # Exports: the owner's has both reviewers' decisions; Bob's only his own.
        owners = list(
            csv.DictReader(
                io.StringIO(
                    alice.get(f"{API}/{pid}/export", params={"format": "csv"}).text.removeprefix(
                        "\ufeff"
                    )
                )
            )
        )
        assert owners[2]["decision"] == "exclude"
        assert (
            owners[2]["reviewer"]
            == f"alice: include; bob: exclude ({EXCLUSION[1]}); settled by the owner"
        )
        assert owners[3]["decision"] == "conflict"
        bobs_export = list(
            csv.DictReader(
                io.StringIO(
                    bob.get(f"{API}/{pid}/export", params={"format": "csv"}).text.removeprefix(
                        "\ufeff"
                    )
                )
            )
        )
        assert [r["decision"] for r in bobs_export[:5]] == [
            "include",
            "include",
            "exclude",
            "maybe",
            "exclude",
        ]
        assert "alice" not in " ".join(r["reviewer"] for r in bobs_export)

        # A removed reviewer loses the project; their decisions stay in the history.
        bob_id = added.json()["reviewers"][1]["id"]
        removed = alice.delete(f"{API}/{pid}/reviewers/{bob_id}")
        assert [r["username"] for r in removed.json()["reviewers"]] == ["alice"]
        refused(bob.get(f"{API}/{pid}"), 404)
        refused(alice.delete(f"{API}/{pid}/reviewers/{uuid.uuid4()}"), 404, "not a reviewer")


def test_single_user_mode_has_one_reviewer(settings: Settings) -> None:
    with client_for(settings) as (_, client):
        import_review(client)
        pid = new_project(client)["id"]
        refused(
            client.post(f"{API}/{pid}/reviewers", json={"username": "bob"}),
            409,
            "multi-user mode",
            "SCHOLARSTREAM_SERVER__MULTI_USER=true",
        )
        assert client.get(f"{API}/{pid}/conflicts").json() == {"conflicts": [], "resolved": 0}


def test_project_names_are_unique_per_owner(data_dir: object, database_url: str) -> None:
    """Each person's projects have names of their own: Bob may name his as Alice named hers,
    and the project she shares with him then stands beside his under the same name."""
    settings = load_settings(
        data_dir=data_dir, database_url=database_url, server={"multi_user": True}
    )
    with reviewers(settings) as users:
        alice, bob = users["alice"], users["bob"]
        for client in (alice, bob):
            import_review(client)
        hers = new_project(alice, name="Triptans")
        his = new_project(bob, name="triptans")
        added = alice.post(f"{API}/{hers['id']}/reviewers", json={"username": "bob"})
        assert added.status_code == 200, added.text
        assert sorted((p["name"], p["your_role"]) for p in bob.get(API).json()["projects"]) == [
            ("Triptans", "reviewer"),
            ("triptans", "owner"),
        ]
        # Among one owner's own projects the name is taken, whoever reviews them.
        refused(
            alice.post(API, json={"name": "TRIPTANS", "source": {"kind": "library"}}),
            409,
            "You already have a screening project named “Triptans”",
        )
        refused(
            bob.post(API, json={"name": "Triptans ", "source": {"kind": "library"}}),
            409,
            "You already have a screening project named “triptans”",
        )
        other = new_project(bob, name="Eletriptan")
        refused(bob.patch(f"{API}/{other['id']}", json={"name": "Triptans"}), 409, "“triptans”")
        assert his["name"] == "triptans"
