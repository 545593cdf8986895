"""A conversation's citation keys hold for the whole conversation: a work keeps its key in
every later turn, a new work gets a new key, a follow-up answer that cites an earlier
turn's record is checked against that record, and the keys survive a restart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from tests.chat.test_chat_api import chat_server, send
from tests.chat.world import Script, call
from tests.conftest import SHARED_DATA

WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels
_ENTRY = re.compile(r"^\[(\d+)\] (.+?)(?: \([^()]*\))?$", re.M)


def shown(tool_return: str) -> dict[str, int]:
    """The records a tool result listed: title to key."""
    return {title: int(key) for key, title in _ENTRY.findall(tool_return)}


def reply(client: httpx.Client, message: str, conversation_id: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {} if conversation_id is None else {"conversation_id": conversation_id}
    events = send(client, message, **body)
    assert events[-1].type == "complete", events[-1].data
    payload: dict[str, Any] = events[-1].data["payload"]
    return payload


def verdicts(payload: dict[str, Any]) -> dict[int, str]:
    return {check["key"]: check["verdict"] for check in payload["citations"]["checks"]}


def reference_keys(payload: dict[str, Any]) -> list[int]:
    references = payload["message"].split("## References", 1)[1]
    return [int(k) for k in re.findall(r"^- \[(\d+)\]", references, re.M)]


CATARACT = "Genetic evaluation of primary cataracts in the German population of single-colored"
NEPHROPATHY = "FAMILIAL NEPHROPATHY IN COCKER SPANIELS"
# What record [2] of the first search (CATARACT) reports, in its own words.
ON_BREEDING_VALUES = (
    "Breeding values for primary cataract were predicted from the ophthalmological "
    "examinations of 615 single-colored English Cocker Spaniels"
)


def test_keys_hold_for_the_whole_conversation_and_survive_a_restart(tmp_path: Path) -> None:
    script = Script(
        [call("search_library", {"query": "primary cataract"})],
        [f"{ON_BREEDING_VALUES} [2]. Kidney disease runs in families too [7]."],
        [call("search_library", {"query": "familial nephropathy", "max_results": 5})],
        [
            f"As said before, {ON_BREEDING_VALUES[0].lower()}{ON_BREEDING_VALUES[1:]} [2]. "
            "Familial nephropathy causes chronic renal failure in Cocker Spaniels [7]. "
            "Hereditary nephropathy has a genetic cause in English Cocker Spaniels [11]. "
            "It is also caused by moonlight [998]."
        ],
    )
    with chat_server(tmp_path, script) as (_, client):
        with WOS.open("rb") as handle:
            imported = client.post("/api/v1/library/imports", files={"file": (WOS.name, handle)})
        assert imported.status_code == 201, imported.text

        first = reply(client, "What causes cataract in cocker spaniels?", None)
        turn_1 = shown(script.last_tool_return())
        assert turn_1[next(t for t in turn_1 if t.startswith(CATARACT))] == 2
        assert turn_1[NEPHROPATHY] == 7 and sorted(turn_1.values()) == list(range(1, 11))
        assert verdicts(first)[2] == "supported"
        conversation = first["conversation_id"]

        second = reply(client, "And kidney disease?", conversation)
        turn_2 = shown(script.last_tool_return())
        # The work found again keeps its key; the new works get the next free keys.
        assert turn_2[NEPHROPATHY] == 7
        new = {title: key for title, key in turn_2.items() if title not in turn_1}
        assert new and sorted(new.values()) == list(range(11, 11 + len(new)))
        # The follow-up model is reminded of the records cited earlier, under their keys.
        instructions = script.instructions[-1] or ""
        assert "## Records cited earlier in this conversation" in instructions
        assert f"[2] {CATARACT}" in instructions
        # Citing turn 1's [2] is checked against that record; a key never given is invalid.
        checked = verdicts(second)
        assert checked[2] == "supported" and checked[998] == "invalid"
        assert checked[7] != "invalid" and checked[11] != "invalid"
        assert reference_keys(second) == [2, 7, 11]  # only the works this answer cites
        assert "[998]" not in second["message"]

    # A new server (a new runtime) reads the conversation's keys back from the database.
    after = Script(
        [
            f"{ON_BREEDING_VALUES} [2]; the other work on kidneys is [11], not [3]. "
            "A key never given stays invalid [999]."
        ],
        [call("search_library", {"query": "familial nephropathy", "max_results": 3})],
        ["Found them."],
        [call("search_library", {"query": "familial nephropathy", "max_results": 3})],
        ["Found them again."],
    )
    with chat_server(tmp_path, after) as (_, client):
        third = reply(client, "What did [2] find?", conversation)
        instructions = after.instructions[-1] or ""
        assert f"[2] {CATARACT}" in instructions and "[11] " in instructions
        assert "[7] " in instructions  # cited in both turns
        assert "[3] " not in instructions.split("## Records cited earlier", 1)[1]  # never cited
        checked = verdicts(third)
        assert checked[2] == "supported" and checked[999] == "invalid"
        assert checked[11] != "invalid" and checked[3] != "invalid"  # shown, though not cited
        assert reference_keys(third) == [2, 3, 11]
        assert "Records cited earlier" not in third["message"]

        reply(client, "Kidney disease again", conversation)
        again = shown(after.last_tool_return())
        assert again and all(turn_2.get(title, key) == key for title, key in again.items())
        assert set(again) & set(turn_2)
        # Another conversation has keys of its own, from [1].
        reply(client, "Kidney disease", None)
        assert sorted(shown(after.last_tool_return()).values()) == [1, 2, 3]
