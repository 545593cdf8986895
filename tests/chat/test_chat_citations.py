"""Chat answers cite the records their tools showed, by key, and every citation is checked
as a research's is (issue 24): a key the tools never showed is removed and flagged, a DOI
the model wrote itself is marked unverified, and the cited records follow the answer."""

from __future__ import annotations

from pathlib import Path

from tests.chat.test_chat_api import chat_server, send
from tests.chat.world import Script, call
from tests.conftest import SHARED_DATA

WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels
ANSWER = (
    "Primary cataract is inherited in the American cocker spaniel [1]. "
    "It is also caused by moonlight [99]. A review agrees (doi:10.5555/made.up.review)."
)


def test_a_chat_answer_cites_the_records_its_tools_showed_and_each_citation_is_checked(
    tmp_path: Path,
) -> None:
    script = Script([call("search_library", {"query": "cataract cocker spaniel"})], [ANSWER])
    with chat_server(tmp_path, script) as (_, client):
        with WOS.open("rb") as handle:
            imported = client.post("/api/v1/library/imports", files={"file": (WOS.name, handle)})
        assert imported.status_code == 201, imported.text
        events = send(client, "What causes cataract in cocker spaniels?")
        shown = script.last_tool_return()
        assert "[1] " in shown
        assert "cite its key" in (script.instructions[-1] or "")

        payload = events[-1].data["payload"]
        citations = payload["citations"]
        assert [(c["key"], c["verdict"]) for c in citations["checks"]][1] == (99, "invalid")
        assert citations["checks"][0]["verdict"] != "invalid"
        assert [r["text"] for r in citations["unverified"]] == ["10.5555/made.up.review"]
        message = payload["message"]
        assert "[99]" not in message and "[citation removed: not in the evidence pack]" in message
        assert "10.5555/made.up.review [unverified: not in the evidence pack]" in message
        references = message.split("## References", 1)[1]
        assert references.count("\n- [") == 1 and "\n- [1] " in references

        # The stored answer is the checked one.
        conversation = client.get(f"/api/v1/chat/conversations/{payload['conversation_id']}")
        stored = [m for m in conversation.json()["messages"] if m["role"] == "assistant"][-1]
        assert stored["response"]["citations"] == citations


def test_an_answer_that_cites_none_of_the_records_shown_has_no_audit(tmp_path: Path) -> None:
    script = Script(
        [call("search_library", {"query": "cataract"})], ["Several studies cover this."]
    )
    with chat_server(tmp_path, script) as (_, client):
        with WOS.open("rb") as handle:
            client.post("/api/v1/library/imports", files={"file": (WOS.name, handle)})
        payload = send(client, "Anything on cataract?")[-1].data["payload"]
        assert "[1] " in script.last_tool_return()  # records were shown under keys
        assert payload["citations"] is None
        assert payload["message"] == "Several studies cover this."
