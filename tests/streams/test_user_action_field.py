"""Seed 000 names the turn's action ``user_action``; the API also accepts ``action``. A
client built from the seed works; one that sends both sends the same action, or is told
plainly to send it once."""

from __future__ import annotations

from typing import Any

from scholarstream.settings import Settings
from tests.streams.test_api import (
    CREATION,
    TOPIC,
    creation,
    refused,
    result,
    start,
    stream_server,
    turn,
)


def _stream_type(value: str) -> dict[str, Any]:
    return {"type": "option_selected", "target_field": "stream_type", "selected_value": value}


def test_the_seeds_user_action_field_is_the_turns_action(db_settings: Settings) -> None:
    with stream_server(db_settings) as (_, client):
        cid = start(client)["id"]
        assert result(turn(client, cid, TOPIC))["next_step"] == "purpose"

        # The seed's request: user_action only.
        seeded = result(turn(client, cid, "", user_action=_stream_type("competitive")))
        assert seeded["updated_config"]["stream_type"] == "competitive"
        assert creation(client, cid)["config"]["stream_type"] == "competitive"

        # Both names with the same action: one action.
        same = _stream_type("clinical")
        both = result(turn(client, cid, "", user_action=same, action=same))
        assert both["updated_config"]["stream_type"] == "clinical"

        # The seed's other actions under its name: options_selected and skip_step.
        areas = {
            "type": "options_selected",
            "target_field": "focus_areas",
            "selected_values": ["Obesity", "Cardiology"],
        }
        listed = result(turn(client, cid, "", user_action=areas))
        assert listed["updated_config"]["focus_areas"] == ["Obesity", "Cardiology"]

        # Two different actions: refused, plainly, and nothing changes.
        before = creation(client, cid)
        url = f"{CREATION}/{cid}/turns"
        response = client.post(
            url,
            json={
                "message": "",
                "user_action": _stream_type("market"),
                "action": _stream_type("regulatory"),
            },
        )
        refused(response, 422, "validation_error", "user_action and action")
        body = response.json()
        assert [f["field"] for f in body["fields"]] == ["user_action"]
        assert "Value error" not in body["message"]
        assert "send the action once" in body["message"]
        assert creation(client, cid) == before

        # A malformed user_action is named as such; an unknown field is still refused.
        refused(
            client.post(url, json={"user_action": {"type": "dance"}}),
            422,
            "validation_error",
            "user_action",
        )
        refused(
            client.post(url, json={"message": "hi", "useraction": {"type": "text_input"}}),
            422,
            "validation_error",
            "useraction",
        )
        assert creation(client, cid) == before
