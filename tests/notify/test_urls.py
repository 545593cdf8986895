"""Apprise URLs: which are accepted, and that what is shown of one never holds a secret."""

from __future__ import annotations

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.notify import Target, check_url, preview, redact

SLACK = "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ"


@pytest.mark.parametrize(
    ("url", "service"),
    [
        ("ntfy://alerts", "ntfy"),
        ("mailto://user:pass@example.com", "E-Mail"),
        ("json://127.0.0.1:8080/hook", "JSON"),
        (SLACK, "Slack"),
    ],
)
def test_urls_apprise_can_send_to_are_accepted(url: str, service: str) -> None:
    checked = check_url(f"  {url}\n")
    assert (checked.url, checked.service) == (url, service)
    assert "url=" not in repr(checked)


@pytest.mark.parametrize(
    "url",
    ["", "   ", "foo://bar", "https://example.com/hook", "not a url", "ntfy://a b", "x" * 3000],
)
def test_other_urls_are_refused_with_examples(url: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_url(url)
    assert caught.value.hint is not None
    assert "ntfy://topic" in caught.value.hint and "json://host/path" in caught.value.hint


@pytest.mark.parametrize(
    ("url", "shown", "hidden"),
    [
        ("json://127.0.0.1:8080/hook", "json://127.0.0.1:8080/hook", []),
        ("ntfy://alerts", "ntfy://alerts", []),
        ("mailto://me:hunter22@example.com", "mailto://***@example.com", ["me", "hunter22"]),
        (
            "ntfys://user:s3cret-pw@ntfy.example.com/topic?token=tk_abcdef",
            "ntfys://***@ntfy.example.com/topic?token=***",
            ["s3cret-pw", "tk_abcdef"],
        ),
        (SLACK, "slack://***/***/***", ["T1JJ3T3L2", "A1BRTD4JD", "TIiajkdnlazkcOXrIdevi7FQ"]),
        ("tgram://123456789:AABBccddEEff/12345", "tgram://123456789:***/12345", ["AABBccddEEff"]),
        (
            "jsons://hooks.example.com/path/abcdef0123456789abcdef?-X-Api-Key=k3y",
            "jsons://hooks.example.com/path/***?-X-Api-Key=***",
            ["abcdef0123456789abcdef", "k3y"],
        ),
        (
            "json://hooks.example.com/p?abcdef0123456789secret",
            "json://hooks.example.com/p?***=***",
            ["abcdef0123456789secret"],
        ),
    ],
)
def test_a_preview_keeps_scheme_and_host_and_masks_secrets(
    url: str, shown: str, hidden: list[str]
) -> None:
    assert preview(url) == shown
    for secret in hidden:
        assert secret not in preview(url).removeprefix(url.split("://")[0])


def test_a_preview_is_short_enough_to_store() -> None:
    shown = preview("json://hooks.example.com/" + "a/" * 900)
    assert len(shown) == 200 and shown.endswith("…")


def test_redact_masks_the_urls_secrets_in_a_message() -> None:
    url = "json://hooks.example.com/path/abcdef0123456789abcdef?token=xyz-123"
    message = "POST https://hooks.example.com/path/abcdef0123456789abcdef?token=xyz-123 failed"
    assert redact(message, url) == "POST https://hooks.example.com/path/***?token=*** failed"


def test_a_target_never_shows_its_url() -> None:
    target = Target.from_url("mailto://me:hunter22@example.com", label="Inbox")
    assert target.label == "Inbox" and target.preview == "mailto://***@example.com"
    for text in (repr(target), str(target), target.model_dump_json()):
        assert "hunter22" not in text
    assert Target.from_url("ntfy://alerts").label == "ntfy"
