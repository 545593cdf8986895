"""Settings: one nested object, built once at start-up and passed to whatever needs it.

Sources, strongest first: keyword arguments, ``SCHOLARSTREAM_*`` environment variables
(``__`` separates nesting, e.g. ``SCHOLARSTREAM_LLM__ROLES__DEFAULT=openai:gpt-4.1-mini``),
a TOML file (``--config`` or ``SCHOLARSTREAM_CONFIG``), then defaults. The providers'
conventional variables (``OPENAI_API_KEY`` ...) fill provider keys that are not set otherwise.

This is the only module that reads the environment.
"""

from __future__ import annotations

import os
import socket
import tomllib
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit, urlunsplit

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from scholarstream.errors import ConfigurationError

ENV_PREFIX = "SCHOLARSTREAM_"
CONFIG_FILE_ENV = "SCHOLARSTREAM_CONFIG"

# Conventional variables that users already have set for other tools.
_PROVIDER_KEY_ENV = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


_EVERY_ADDRESS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - recognised, not bound
"""Hosts that mean \"listen on every address\"."""


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    multi_user: bool = Field(
        default=False,
        description="Accounts and login. Off: one local user, no login, loopback only.",
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="Encrypts stored provider keys. Generated into the data directory if unset.",
    )
    public_url: str | None = Field(default=None, description="Base URL used in shared links.")
    session_days: int = Field(default=14, ge=1)
    cookie_secure: bool = False
    login_max_failures: int = Field(
        default=5,
        ge=1,
        description="Failed logins for one account from one address before login is refused "
        "for login_window_seconds.",
    )
    login_max_failures_per_address: int = Field(
        default=30,
        ge=1,
        description="Failed logins from one address, whatever the account, before it is refused.",
    )
    login_window_seconds: int = Field(
        default=900, ge=1, description="How long a failed login counts against the limits."
    )
    allow_private_notification_hosts: bool = Field(
        default=False,
        description="Multi-user mode: let users' notification targets reach loopback, private "
        "and link-local hosts (an intranet). Single-user mode always may.",
    )

    @property
    def base_url(self) -> str:
        """Where users reach this server: ``public_url``, else the address it listens on
        (``serve --host/--port`` when it was started with them: see ``Settings.serving_at``)."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = self.host
        if host in _EVERY_ADDRESS:  # listening everywhere: no one can open that address
            host = socket.gethostname()
        host = f"[{host}]" if ":" in host else host  # an IPv6 address
        return f"http://{host}:{self.port}"


class ProviderSettings(_Section):
    api_key: SecretStr | None = None
    base_url: str | None = None
    structured_output: Literal["native", "tool", "prompted"] | None = Field(
        default=None,
        description="How typed answers are requested: native (JSON schema), tool or prompted. "
        "Unset: the provider kind's default (native for OpenAI-compatible local servers).",
    )
    supports_tools: bool | None = Field(
        default=None, description="False: chat answers in text and offers slash commands."
    )
    compact_prompt: bool | None = Field(
        default=None, description="A short chat system prompt (default for local servers)."
    )
    streamed_requests: bool | None = Field(
        default=None,
        description="Stream every request, typed answers too, so that llm.timeout_seconds "
        "bounds each wait for the next tokens, not a whole answer (default for local servers).",
    )
    max_tokens: dict[str, int] = Field(
        default_factory=dict, description="Per-feature answer budgets for this provider."
    )


class ModelPrice(_Section):
    """USD per million tokens, for models the built-in price table does not know."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


DEFAULT_MAX_TOKENS: dict[str, int] = {
    "default": 1024,
    "chat": 1500,
    "stream_guide": 700,
    "search.intent": 600,
    "search.query": 700,
    "search.score": 1200,
    "search.organize": 500,
    "search.dedup": 800,
    "streams.relevance": 1200,
    "ai_columns": 300,
    "screening.suggest": 300,
    "research": 2000,
    "research.synthesis": 3000,
    "research.title": 40,
    "models.check": 64,
}


class LLMSettings(_Section):
    roles: dict[str, str] = Field(
        default_factory=dict,
        description="Role name -> model string, e.g. default = 'openai:gpt-4.1-mini'.",
    )
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    timeout_seconds: float = Field(default=120.0, gt=0)
    deadline_seconds: float = Field(
        default=300.0,
        gt=0,
        description="The most one model call may take in all, streaming or not; the request "
        "is cancelled on the wire when it is reached.",
    )
    max_tokens: dict[str, int] = Field(
        default_factory=dict,
        description="Answer budget (max_tokens) per feature, over DEFAULT_MAX_TOKENS; "
        "'default' for a feature not named.",
    )
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    user_endpoints: Literal["any", "public", "off"] = Field(
        default="public",
        description="Who may add an OpenAI-compatible endpoint of their own (Settings -> "
        "Models). any: every user, on any address; public: every user, but only admins "
        "on loopback, private or link-local addresses (the server's network); off: admins "
        "only. Single-user mode always may.",
    )


class SourceSettings(_Section):
    ncbi_api_key: SecretStr | None = None
    semantic_scholar_api_key: SecretStr | None = None
    serpapi_api_key: SecretStr | None = None
    openalex_api_key: SecretStr | None = Field(
        default=None, description="OpenAlex API key; without one its daily allowance is small."
    )
    contact_email: str | None = Field(
        default=None, description="Sent to PubMed, OpenAlex and Crossref for their polite pools."
    )


class SearchSettings(_Section):
    default_sources: list[str] = Field(
        default_factory=lambda: ["pubmed", "openalex", "semantic_scholar", "library"],
        description="Sources a paper search uses unless the strategy names others.",
    )
    results_per_source: int = Field(default=50, ge=1, le=500)
    max_iterations: int = Field(default=5, ge=1, le=20)
    llm_adjudication: bool = Field(
        default=False,
        description="Ask the model about borderline duplicate pairs (costs one call per batch).",
    )
    scoring_batch_size: int = Field(default=10, ge=1, le=50)
    mesh_file: Path | None = Field(
        default=None,
        description="A MeSH file replacing the MeSH that ships with ScholarStream (for mapping "
        "concepts to headings): the package's format, NLM descriptors as a TSV "
        "(descriptor_ui, descriptor_name, tree_numbers, entry_terms), or names as a CSV "
        "(id,scheme,subject).",
    )


class SemanticSettings(_Section):
    """Ranking by meaning: the embedding model that ships with ScholarStream."""

    enabled: bool = Field(
        default=True,
        description="Embed library records in the background and rank searches by words and "
        "meaning together; off: by words alone.",
    )
    batch_size: int = Field(
        default=32, ge=1, le=512, description="Records embedded per batch (and per commit)."
    )
    threads: int = Field(
        default=0,
        ge=0,
        le=64,
        description="CPU threads the embedding model may use; 0: one per core.",
    )


class GroundingSettings(_Section):
    """The evidence a research or a chat answer may cite: how much of it a pack holds, and
    how its citations are checked."""

    pack_size: int = Field(
        default=20,
        ge=1,
        le=100,
        description="Records in an evidence pack (the best ranked for the question).",
    )
    results_per_source: int = Field(
        default=25,
        ge=1,
        le=500,
        description="Records asked of each source when looking for evidence (at least the "
        "pack's size).",
    )
    judge_with_model: bool = Field(
        default=True,
        description="With a model set up (the 'fast' role), it judges each citation: "
        "supports, contradicts or does not address; else (or when it fails) the offline "
        "support score decides.",
    )
    max_judged_citations: int = Field(
        default=24,
        ge=0,
        le=500,
        description="Citations of one answer the model judges; the rest get the offline score.",
    )


class ChatSettings(_Section):
    max_tool_rounds: int = Field(
        default=6, ge=1, le=50, description="Tool calls one answer may make before it must answer."
    )
    max_context_bytes: int = Field(
        default=200_000, ge=1_000, description="Largest page context a message may carry (JSON)."
    )
    max_message_chars: int = Field(default=8_000, ge=1)
    history_messages: int = Field(
        default=40, ge=0, description="Earlier messages given to the model when a chat continues."
    )
    reconnect_grace_seconds: float = Field(
        default=20.0,
        ge=0.0,
        description="How long an answer goes on with no client listening before it is "
        "cancelled; a client that reconnects within it gets the rest.",
    )
    retain_finished_seconds: float = Field(
        default=300.0, ge=0.0, description="How long a finished answer's events stay replayable."
    )
    ai_column_concurrency: int = Field(default=4, ge=1, le=32)
    web_read_max_bytes: int = Field(
        default=2_000_000,
        ge=1_000,
        le=50_000_000,
        description="Most bytes of one web page read_web_page downloads; the rest is not "
        "read, and the text says the page was cut.",
    )
    web_read_timeout_seconds: float = Field(
        default=20.0,
        gt=0.0,
        le=300.0,
        description="Longest time one read_web_page call may take, redirects included.",
    )
    web_read_max_chars: int = Field(
        default=12_000,
        ge=500,
        le=200_000,
        description="Most characters of a page's text given to the model; the text says "
        "when it was cut.",
    )
    web_read_allow_private_hosts: bool = Field(
        default=False,
        description="Let read_web_page read hosts on loopback, private, link-local and "
        "other non-public addresses (an intranet). Off by default: on a shared server it "
        "would let any user reach the server's own network.",
    )


class StreamSettings(_Section):
    scheduler_enabled: bool = Field(
        default=True,
        description="Run research streams on their report_frequency. The schedule checks "
        "for due streams every 5 minutes; false leaves only runs on demand.",
    )
    retry_failed_after_minutes: int = Field(
        default=60,
        ge=5,
        description="A scheduled run in which every source failed is tried again after "
        "this long, not at every check.",
    )
    model_relevance: bool = Field(
        default=True,
        description="Judge each new item's relevance with the fast model when one is "
        "configured (items it cannot judge are scored offline); false: offline scoring "
        "only, no model costs.",
    )
    relevance_batch_size: int = Field(
        default=10, ge=1, le=50, description="Items per model call when the model judges."
    )


class WebhookSettings(_Section):
    """One receiver of the research lifecycle events (the outbox ``research_events``)."""

    url: str = Field(
        pattern=r"^https?://\S+$",
        description="Where each event is POSTed as JSON (http:// or https://).",
    )
    secret: SecretStr | None = Field(
        default=None,
        description="Signs each body: header X-ScholarStream-Signature-256 is 'sha256=' and "
        "the hex HMAC-SHA256 of the raw body with this secret. Unset: no signature.",
    )
    events: list[str] | None = Field(
        default=None,
        description="Event types to send (e.g. ['research.completed', 'research.shared']); "
        "unset: every event.",
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="Names the webhook's delivery progress (default: its URL). Keep the name "
        "when the URL changes and delivery carries on where it was.",
    )

    @field_validator("events")
    @classmethod
    def _event_types(cls, events: list[str] | None) -> list[str] | None:
        if events is not None:
            for event in events:
                if not event.startswith("research."):
                    raise ValueError(f"{event!r} is not a research event type (research.*)")
        return events


class ResearchSettings(_Section):
    title_role: str | None = Field(
        default="fast",
        description="The model role that writes a draft's title from its prompt when the draft "
        "has none (resolved like every role: without its own model, the default model "
        "writes it). Offline, or when it fails, the title is cut from the prompt. Unset "
        "(or empty): always cut.",
    )
    title_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description="Longest wait for the model-written title; after it the title is cut "
        "from the prompt.",
    )
    share_reports: bool = Field(
        default=True,
        description="Store a shareable HTML report of each completed research and notify the "
        "owner's research_report targets with its link (built on server.public_url; set it "
        "so that the link reaches people outside this machine).",
    )
    share_url: str | None = Field(
        default=None,
        description="Where the shareable reports are stored: a directory or any fsspec URL "
        "(s3://bucket/shares, gs://..., memory://...). Default: the directory 'shares' in "
        "data_dir. They are served at <server.public_url>/shared/research/<token>.",
    )
    webhooks: list[WebhookSettings] = Field(
        default_factory=list,
        description="Receivers of every research's lifecycle events, each POSTed as JSON in "
        "order, at least once, with retries.",
    )
    webhook_timeout_seconds: float = Field(
        default=10.0, gt=0, le=120, description="Longest wait for a webhook to answer one POST."
    )
    webhook_max_attempts: int = Field(
        default=10,
        ge=1,
        le=50,
        description="Tries of one event at one webhook; then it is given up (logged, counted) "
        "and the next event goes.",
    )
    max_selected_llms: int = Field(
        default=8,
        ge=1,
        le=50,
        description="Most models one research may ask (selectedLlms): a server key on a router "
        "such as OpenRouter accepts any model name, so the fan-out is capped.",
    )
    webhook_backoff_seconds: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="Wait before the first retry of a failed POST; each further wait is three "
        "times longer, up to an hour.",
    )

    @field_validator("webhooks")
    @classmethod
    def _distinct_names(cls, webhooks: list[WebhookSettings]) -> list[WebhookSettings]:
        names = [hook.name or hook.url for hook in webhooks]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"two webhooks have the same name or URL: {', '.join(duplicates)}")
        return webhooks

    @field_validator("title_role", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # An environment variable cannot be null: SCHOLARSTREAM_RESEARCH__TITLE_ROLE="".
        return None if value == "" else value


class LimitsSettings(_Section):
    """Bounds on what one request or one imported file may make the server hold."""

    json_body_bytes: int = Field(
        default=1_048_576,
        ge=1024,
        description="Largest request body of any route but the imports (bytes); a larger one "
        "is refused with 413 before it is read.",
    )
    import_body_bytes: int = Field(
        default=104_857_600,
        ge=1024,
        description="Largest uploaded import (bytes, as sent); it is streamed to a temporary "
        "file, never held in memory.",
    )
    import_decompressed_bytes: int = Field(
        default=524_288_000,
        ge=1024,
        description="Largest size a compressed import (.gz, .zip) may expand to (bytes).",
    )
    import_decompression_ratio: int = Field(
        default=100,
        ge=2,
        description="Largest ratio of decompressed to compressed size of an import; beyond it "
        "the file is refused as a decompression bomb.",
    )
    import_line_chars: int = Field(
        default=1_000_000,
        ge=1000,
        description="Longest line of an imported file (characters).",
    )
    import_field_chars: int = Field(
        default=200_000,
        ge=1000,
        description="Longest field of an imported record (characters); a longer field is a "
        "problem reported for that record, and the file's other records are imported.",
    )


class LoggingSettings(_Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["plain", "json"] = "plain"

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value


class EngineSettings(_Section):
    executor_id: str | None = Field(
        default=None,
        description="This process's identity in the durable engine; on start a process "
        "resumes the interrupted workflows of its id, and two running processes may not "
        "share one. Default: '<hostname>-serve-<n>' or '<hostname>-worker-<n>', n the "
        "lowest number no running process of that role on this host holds (a restarted "
        "process gets its old id back). 'scholarstream research' always takes an id of its "
        "own. See docs/deployment.md.",
    )
    system_database_url: str | None = Field(
        default=None,
        description="DBOS system database. Default: SQLite beside the app database, "
        "or the app database itself when that is PostgreSQL.",
    )
    run_queues: bool = Field(
        default=True,
        description="Whether 'scholarstream serve' also works the queues and the schedules "
        "(one process doing everything). Set false when 'scholarstream worker' processes do "
        "the work ('serve --no-workers' does the same); a worker always works them.",
    )
    recovery_grace_seconds: float = Field(
        default=60.0,
        ge=0,
        description="How long the interrupted workflows of a process that died wait for it "
        "to come back under its executor id before another running process recovers them "
        "(a 'scholarstream research' process is never waited for).",
    )
    schedules: dict[str, str] = Field(
        default_factory=dict,
        description="Schedule name -> cron (six fields, seconds first) replacing the built-in "
        'one, e.g. {"run-due-streams": "0 */15 * * * *"}. Every process sharing a '
        "database must be given the same.",
    )


def default_data_dir() -> Path:
    return platformdirs.user_data_path("scholarstream", appauthor=False)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = Field(
        default=None, description="Default: SQLite file scholarstream.sqlite in data_dir."
    )
    server: ServerSettings = Field(default_factory=ServerSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sources: SourceSettings = Field(default_factory=SourceSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)
    grounding: GroundingSettings = Field(default_factory=GroundingSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    streams: StreamSettings = Field(default_factory=StreamSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)

    # Set only for the duration of load_settings(); pydantic-settings reads it in
    # settings_customise_sources, which has no other way to receive a per-call path.
    _toml_file: ClassVar[Path | None] = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if cls._toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=cls._toml_file))
        return tuple(sources)

    def serving_at(self, host: str, port: int) -> Settings:
        """These settings for a server listening on ``host:port`` (``serve --host/--port``):
        what it makes with no request to go by (a stream report's e-mailed link, a shared
        research's link) names that address; ``server.public_url``, when set, still wins."""
        server = self.server.model_copy(update={"host": host, "port": port})
        return self.model_copy(update={"server": server})

    @property
    def app_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'scholarstream.sqlite').resolve()}"

    @property
    def is_postgres(self) -> bool:
        return self.app_database_url.startswith("postgresql")

    @property
    def system_database_url(self) -> str:
        """DBOS's own database URL (a synchronous driver URL)."""
        if self.engine.system_database_url:
            return self.engine.system_database_url
        if self.is_postgres:
            # Same database; DBOS keeps its tables in its own `dbos` schema.
            return self.app_database_url.replace("+asyncpg", "+psycopg", 1)
        return f"sqlite:///{(self.data_dir / 'dbos.sqlite').resolve()}"

    def secret_values(self) -> list[str]:
        """Every secret this configuration holds, for log redaction."""
        secrets: list[SecretStr | None] = [
            self.server.secret_key,
            self.sources.ncbi_api_key,
            self.sources.semantic_scholar_api_key,
            self.sources.serpapi_api_key,
            self.sources.openalex_api_key,
            *(p.api_key for p in self.llm.providers.values()),
            *(hook.secret for hook in self.research.webhooks),
        ]
        values = [s.get_secret_value() for s in secrets if s is not None]
        password = urlsplit(self.app_database_url).password
        if password:
            values.append(password)
        return [v for v in values if len(v) >= 4]

    def masked(self) -> dict[str, Any]:
        """The effective settings as plain data, secrets masked."""
        data = self.model_dump(mode="json")
        data["database_url"] = mask_url_password(self.app_database_url)
        data["engine"]["system_database_url"] = mask_url_password(self.system_database_url)
        return data


def mask_url_password(url: str) -> str:
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _provider_keys_from_conventional_env(environ: dict[str, str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for provider, names in _PROVIDER_KEY_ENV.items():
        for name in names:
            if environ.get(name):
                found[provider] = {"api_key": environ[name]}
                break
    return found


_SETTING_MESSAGES = {"extra_forbidden": lambda _error: "is not a setting; remove it"}


_DATA_DIR_PROBLEMS: dict[type[OSError], str] = {
    FileExistsError: "it is a file, not a directory",
    NotADirectoryError: "part of its path is a file, not a directory",
    PermissionError: "you may not write there",
    FileNotFoundError: "it cannot be created there",
}


def make_directory(path: Path, what: str, *, hint: str) -> Path:
    """``path``, created if missing; ``ConfigurationError`` naming ``what`` ("The data
    directory") when it cannot be used (a file, a read-only place, a path that cannot
    exist)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError
    except OSError as exc:
        reason = next(
            (text for kind, text in _DATA_DIR_PROBLEMS.items() if isinstance(exc, kind)),
            exc.strerror or "it cannot be used",
        )
        raise ConfigurationError(f"{what} {path} cannot be used: {reason}.", hint=hint) from exc
    return path


def prepare_data_dir(settings: Settings) -> Path:
    """The data directory, created if missing (``make_directory``)."""
    return make_directory(
        settings.data_dir,
        "The data directory",
        hint="Give --data-dir (or SCHOLARSTREAM_DATA_DIR, or data_dir in the config file) a "
        "directory you can write to; it is created if it does not exist.",
    )


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the settings once. Raises ConfigurationError with the offending field named."""
    from pydantic import ValidationError

    path = config_file or (
        Path(os.environ[CONFIG_FILE_ENV]) if os.environ.get(CONFIG_FILE_ENV) else None
    )
    if path is not None and not path.is_file():
        raise ConfigurationError(
            f"Config file {path} does not exist.",
            hint="Pass an existing TOML file with --config, or unset SCHOLARSTREAM_CONFIG.",
        )
    Settings._toml_file = path
    try:
        settings = Settings(**overrides)
    except tomllib.TOMLDecodeError as exc:
        # The decoder's own words name the problem and its line ("Unclosed array (at line
        # 3, column 9)"): about the user's file, not the program.
        raise ConfigurationError(
            f"Config file {path} is not valid TOML: {exc}.",
            hint="Fix the file at the place named (https://toml.io shows the syntax), or "
            "pass another with --config.",
        ) from exc
    except ValidationError as exc:
        from scholarstream.validation_messages import explain

        # Named as written in the config file and the docs ("server.port").
        problems = explain(exc, whole="the settings", then=".", overrides=_SETTING_MESSAGES)
        raise ConfigurationError(
            f"Invalid settings: {problems}.",
            hint="Fix the named setting in your environment (SCHOLARSTREAM_...) or config file.",
        ) from exc
    finally:
        Settings._toml_file = None
    for provider, values in _provider_keys_from_conventional_env(dict(os.environ)).items():
        current = settings.llm.providers.get(provider)
        if current is None:
            settings.llm.providers[provider] = ProviderSettings(
                api_key=SecretStr(values["api_key"])
            )
        elif current.api_key is None:
            current.api_key = SecretStr(values["api_key"])
    return settings
