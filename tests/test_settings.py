from __future__ import annotations

from pathlib import Path

import pytest

from scholarstream.errors import ConfigurationError
from scholarstream.settings import load_settings


def test_defaults_keep_everything_in_the_data_directory(data_dir: Path) -> None:
    settings = load_settings(data_dir=data_dir)
    assert settings.app_database_url == f"sqlite+aiosqlite:///{data_dir / 'scholarstream.sqlite'}"
    assert settings.system_database_url == f"sqlite:///{data_dir / 'dbos.sqlite'}"
    assert settings.server.host == "127.0.0.1"
    assert settings.server.multi_user is False
    assert settings.llm.roles == {}


def test_nested_environment_variables(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("SCHOLARSTREAM_DATA_DIR", str(data_dir))
    monkeypatch.setenv("SCHOLARSTREAM_LLM__ROLES__DEFAULT", "openai:gpt-4.1-mini")
    monkeypatch.setenv("SCHOLARSTREAM_LLM__ROLES__FAST", "ollama:llama3.1")
    monkeypatch.setenv("SCHOLARSTREAM_LLM__PROVIDERS__VLLM__BASE_URL", "http://127.0.0.1:9000/v1")
    monkeypatch.setenv("SCHOLARSTREAM_SOURCES__CONTACT_EMAIL", "me@example.org")
    monkeypatch.setenv("SCHOLARSTREAM_SERVER__PORT", "9001")
    settings = load_settings()
    assert settings.data_dir == data_dir
    assert settings.llm.roles == {"default": "openai:gpt-4.1-mini", "fast": "ollama:llama3.1"}
    assert settings.llm.providers["vllm"].base_url == "http://127.0.0.1:9000/v1"
    assert settings.sources.contact_email == "me@example.org"
    assert settings.server.port == 9001


def test_toml_file_is_read_and_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path
) -> None:
    config = tmp_path / "scholarstream.toml"
    config.write_text(
        f'data_dir = "{data_dir}"\n'
        "[server]\nport = 8100\nmulti_user = true\n"
        '[llm.roles]\ndefault = "anthropic:claude-sonnet-4-5"\n'
        '[sources]\nncbi_api_key = "ncbi-secret-value"\n'
    )
    monkeypatch.setenv("SCHOLARSTREAM_SERVER__PORT", "8200")
    settings = load_settings(config)
    assert settings.server.port == 8200
    assert settings.server.multi_user is True
    assert settings.llm.roles["default"] == "anthropic:claude-sonnet-4-5"
    assert settings.sources.ncbi_api_key is not None
    assert settings.sources.ncbi_api_key.get_secret_value() == "ncbi-secret-value"


def test_config_file_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[logging]\nformat = 'json'\n")
    monkeypatch.setenv("SCHOLARSTREAM_CONFIG", str(config))
    assert load_settings().logging.format == "json"


def test_conventional_provider_variables_fill_missing_keys(
    monkeypatch: pytest.MonkeyPatch, data_dir: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-conventional-123456")
    monkeypatch.setenv("SCHOLARSTREAM_LLM__PROVIDERS__ANTHROPIC__API_KEY", "explicit-anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "conventional-anthropic")
    settings = load_settings(data_dir=data_dir)
    openai_key = settings.llm.providers["openai"].api_key
    anthropic_key = settings.llm.providers["anthropic"].api_key
    assert openai_key is not None
    assert openai_key.get_secret_value() == "sk-conventional-123456"
    assert anthropic_key is not None
    assert anthropic_key.get_secret_value() == "explicit-anthropic"


def test_invalid_value_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHOLARSTREAM_SERVER__PORT", "eighty")
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    assert "server.port" in caught.value.message
    assert caught.value.hint is not None


def test_unknown_setting_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[server]\nprot = 1\n")
    with pytest.raises(ConfigurationError, match=r"server\.prot"):
        load_settings(config)


def test_missing_config_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        load_settings(tmp_path / "absent.toml")
    assert "does not exist" in caught.value.message
    assert caught.value.hint is not None
    assert "--config" in caught.value.hint


def test_postgres_uses_its_own_database_for_dbos(data_dir: Path) -> None:
    settings = load_settings(
        data_dir=data_dir, database_url="postgresql+asyncpg://u:pw@db.internal:5432/app"
    )
    assert settings.is_postgres
    assert settings.system_database_url == "postgresql+psycopg://u:pw@db.internal:5432/app"


def test_masked_hides_every_secret(data_dir: Path) -> None:
    settings = load_settings(
        data_dir=data_dir,
        database_url="postgresql+asyncpg://u:dbpassword@db/app",
        server={"secret_key": "server-secret-value"},
        llm={"providers": {"openai": {"api_key": "sk-abcdefghijkl"}}},
        sources={"serpapi_api_key": "serp-secret-value"},
    )
    text = repr(settings.masked())
    for secret in ("dbpassword", "server-secret-value", "sk-abcdefghijkl", "serp-secret-value"):
        assert secret not in text
    assert "postgresql+asyncpg://u:***@db/app" in text
    assert set(settings.secret_values()) >= {
        "dbpassword",
        "server-secret-value",
        "sk-abcdefghijkl",
        "serp-secret-value",
    }


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "http://127.0.0.1:8123"),
        ("::1", "http://[::1]:8123"),
        ("0.0.0.0", "http://{hostname}:8123"),  # noqa: S104
        ("::", "http://{hostname}:8123"),
    ],
)
def test_links_name_an_address_people_can_open(host: str, expected: str) -> None:
    import socket

    from scholarstream.settings import ServerSettings

    server = ServerSettings(host=host, port=8123)

    assert server.base_url == expected.format(hostname=socket.gethostname())
    assert ServerSettings(host=host, public_url="https://lab.example/ss/").base_url == (
        "https://lab.example/ss"
    )
