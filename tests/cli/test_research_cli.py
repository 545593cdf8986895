"""``scholarstream research``: the whole run in the terminal, on the durable engine the
command launches in the test process, with scripted models in place of the providers
(``tests.research.engine_world``). Progress and questions are on stderr, the report on
stdout. A run of the engine costs about a second, so each test launches it at most twice."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS
from typer.testing import CliRunner

from scholarstream.cli import app, context
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.conftest import SHARED_DATA
from tests.helpers import make_runtime
from tests.research.builders import ANTHROPIC, GOOGLE, MODELS, OPENAI
from tests.research.engine_world import SYNTHESIZER, Behaviour, ScriptedModels, answer, fail, hang

KEYS = {
    "SCHOLARSTREAM_LLM__PROVIDERS__OPENAI__API_KEY": "sk-test-openai-key",
    "SCHOLARSTREAM_LLM__PROVIDERS__ANTHROPIC__API_KEY": "sk-test-anthropic-key",
    "SCHOLARSTREAM_LLM__PROVIDERS__GOOGLE__API_KEY": "test-google-key",
}
ROLES = {
    "SCHOLARSTREAM_LLM__ROLES__DEFAULT": OPENAI,
    "SCHOLARSTREAM_LLM__ROLES__SYNTHESIS": SYNTHESIZER,
    # Titles and sharing have their own tests (tests/research): here a draft's title is cut
    # from the prompt, only the research's models are called, and a test turns sharing on.
    "SCHOLARSTREAM_RESEARCH__TITLE_ROLE": "",
    "SCHOLARSTREAM_RESEARCH__SHARE_REPORTS": "false",
}
PROMPT = "Tirzepatide safety in adolescents"


class TerminalRunner(CliRunner):
    """Its stdin is a terminal (the user can be asked); stdout and stderr are not."""

    @contextlib.contextmanager
    def isolation(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with super().isolation(*args, **kwargs) as streams:
            sys.stdin.isatty = lambda: True  # type: ignore[method-assign]
            yield streams


@contextlib.contextmanager
def no_engine_left() -> Iterator[None]:
    # DBOS is one instance per process: none may be left over, by another test or this one.
    DBOS.destroy(destroy_registry=False)
    try:
        yield
    finally:
        DBOS.destroy(destroy_registry=False)


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedModels]:
    """The scripted models every runtime of the command is built with."""
    scripted = ScriptedModels()

    def runtime_with_scripted_models(settings: Settings) -> Runtime:
        return make_runtime(settings, models=scripted.overrides([*MODELS, SYNTHESIZER]))

    monkeypatch.setattr(context, "build_runtime", runtime_with_scripted_models)
    with no_engine_left():
        yield scripted


class Result:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def __repr__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run(
    data_dir: Path,
    *args: str | Path,
    input: str | None = None,
    env: Mapping[str, str | None] | None = None,
    terminal: bool = False,
) -> Result:
    runner = TerminalRunner() if terminal else CliRunner()
    result = runner.invoke(
        app,
        ["--data-dir", str(data_dir), *map(str, args)],
        input=input,
        env={"COLUMNS": "200", **KEYS, **ROLES, **(env or {})},
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


def research_id_in(text: str) -> uuid.UUID:
    marker = "stored as "
    return uuid.UUID(text[text.index(marker) + len(marker) :][:36])


def stored(data_dir: Path) -> list[dict[str, Any]]:
    listed = run(data_dir, "research", "list", "--json")
    assert listed.code == 0, listed
    research: list[dict[str, Any]] = json.loads(listed.stdout)["research"]
    return research


def test_the_issues_invocation_shows_progress_then_the_synthesis(
    data_dir: Path, models: ScriptedModels
) -> None:
    models.plan(OPENAI, answer("GLP-1/GIP agonism was **well tolerated**."))
    models.plan(ANTHROPIC, answer("Gastrointestinal events were the most common."))
    models.plan(SYNTHESIZER, answer("Both agree: tolerated, mostly GI events [M1][M2]."))

    result = run(
        data_dir,
        "research",
        PROMPT,
        "--models",
        f"{OPENAI}, {ANTHROPIC}",
        "--title",
        "Tirzepatide in adolescents",
        terminal=True,
    )

    assert result.code == 0, result
    progress = result.stderr
    assert f"Asking 2 models: {OPENAI}, {ANTHROPIC}" in progress
    for model in (OPENAI, ANTHROPIC):
        assert f"· {model} pending" in progress and f"✓ {model} completed" in progress
    assert progress.index("completed") < progress.index("Synthesizing...")
    report = result.stdout
    assert report.startswith("# Tirzepatide in adolescents\n")
    synthesis = report.index("## Synthesis\n\nBoth agree: tolerated, mostly GI events [M1][M2].")
    assert synthesis < report.index(f"## {OPENAI}\n\nGLP-1/GIP agonism was **well tolerated**.")
    assert f"## {ANTHROPIC}\n\nGastrointestinal events" in report
    assert "Share link" not in report
    assert models.calls == {OPENAI: 1, ANTHROPIC: 1, SYNTHESIZER: 1}

    (research,) = stored(data_dir)
    assert research["status"] == "completed" and research["synthesisLlm"] == SYNTHESIZER
    shown = run(data_dir, "research", "show", research["id"])
    assert shown.code == 0 and shown.stdout == report


def test_a_shared_research_prints_its_share_link(data_dir: Path, models: ScriptedModels) -> None:
    sharing = {
        "SCHOLARSTREAM_SERVER__PUBLIC_URL": "https://scholar.example.org",
        "SCHOLARSTREAM_RESEARCH__SHARE_REPORTS": "true",
    }
    result = run(
        data_dir,
        "research",
        PROMPT,
        "-m",
        f"{OPENAI},{ANTHROPIC}",
        "--on-partial-failure",
        "proceed",
        env=sharing,
    )

    assert result.code == 0, result
    (research,) = stored(data_dir)
    share_url = research["shareInfo"]["shareUrl"]
    assert share_url.startswith("https://scholar.example.org/")
    assert result.stdout.endswith(f"\nShare link: {share_url}\n")
    assert run(data_dir, "research", "show", research["id"]).stdout == result.stdout


def test_one_model_and_an_external_report(
    data_dir: Path, models: ScriptedModels, tmp_path: Path
) -> None:
    notes = tmp_path / "trial-notes.md"
    notes.write_text("SURPASS-PEDS: HbA1c fell 2.2 points.\n", encoding="utf-8")
    models.plan(SYNTHESIZER, answer("Answer and notes agree [M1][R1]."))

    result = run(
        data_dir,
        "research",
        "run",
        PROMPT,
        "-m",
        OPENAI,
        "--synthesis",
        SYNTHESIZER,
        "--external-report",
        notes,
        "--on-partial-failure",
        "cancel",
    )

    assert result.code == 0, result
    assert "## Synthesis\n\nAnswer and notes agree [M1][R1]." in result.stdout
    assert "trial-notes.md" in models.prompts[SYNTHESIZER][0]
    assert "SURPASS-PEDS" in models.prompts[SYNTHESIZER][0]


def test_the_default_models_and_a_single_answer_without_synthesis(
    data_dir: Path, models: ScriptedModels
) -> None:
    # Only the default role is configured, with its key: one model, nothing to synthesise.
    env: dict[str, str | None] = {"SCHOLARSTREAM_LLM__ROLES__SYNTHESIS": None}
    result = run(data_dir, "research", PROMPT, "--on-partial-failure", "proceed", env=env)

    assert result.code == 0, result
    assert f"Asking 1 model: {OPENAI}" in result.stderr
    assert "Synthesizing..." not in result.stderr
    assert "*Synthesis not available*" in result.stdout
    assert f"## {OPENAI}\n\nAnswer of {OPENAI}" in result.stdout
    assert models.calls == {OPENAI: 1}


def test_partial_failure_asks_and_proceeds(data_dir: Path, models: ScriptedModels) -> None:
    models.plan(ANTHROPIC, fail(529))

    result = run(
        data_dir,
        "research",
        PROMPT,
        "--models",
        ",".join(MODELS),
        input="later\np\n",  # not a choice: asked again
        terminal=True,
    )

    assert result.code == 0, result
    progress = result.stderr
    assert "1 of 3 models failed (2 answered):" in progress
    assert f"✗ {ANTHROPIC}: " in progress and "[llm_error]" in progress
    assert "[p]roceed with the 2 answers" in progress and "2 of 2 retries left" in progress
    assert progress.index("failed (2 answered)") < progress.index("Synthesizing...")
    assert f"## {ANTHROPIC} (failed)" in result.stdout
    assert "## Synthesis" in result.stdout
    assert models.calls[ANTHROPIC] == 1
    synthesis_prompt = models.prompts[SYNTHESIZER][0]
    assert f"Answer of {OPENAI}" in synthesis_prompt and ANTHROPIC in synthesis_prompt


def test_partial_failure_retried_until_it_succeeds(data_dir: Path, models: ScriptedModels) -> None:
    models.plan(GOOGLE, fail(500), fail(503))  # the second retry answers

    result = run(
        data_dir, "research", PROMPT, "-m", ",".join(MODELS), "--on-partial-failure", "retry"
    )

    assert result.code == 0, result
    progress = result.stderr
    assert progress.count("--on-partial-failure retry: retry.") == 2
    assert progress.count("Retrying failed providers...") == 2
    assert f"✗ {GOOGLE} (attempt 2) failed" in progress
    assert f"✓ {GOOGLE} (attempt 3) completed" in progress
    assert f"## {GOOGLE}\n\nAnswer of {GOOGLE}" in result.stdout
    assert "(failed)" not in result.stdout
    assert models.calls == {OPENAI: 1, ANTHROPIC: 1, GOOGLE: 3, SYNTHESIZER: 1}


def test_cancel_fails_the_research_then_it_is_retried(
    data_dir: Path, models: ScriptedModels
) -> None:
    models.plan(ANTHROPIC, fail(500))

    cancelled = run(
        data_dir,
        "research",
        PROMPT,
        "-m",
        f"{OPENAI},{ANTHROPIC}",
        "--on-partial-failure",
        "cancel",
    )

    assert cancelled.code == 1, cancelled
    assert "Research failed: Cancelled by user" in cancelled.stderr
    assert "What to do: Create a new research." in cancelled.stderr
    assert f"## {OPENAI}\n\nAnswer of {OPENAI}" in cancelled.stdout  # what was received
    assert not models.calls[SYNTHESIZER]
    (research,) = stored(data_dir)
    assert (research["status"], research["failureReason"]) == ("failed", "cancelled_by_user")

    listed = run(data_dir, "research", "list", "--status", "failed")
    (row,) = [line for line in listed.stdout.splitlines() if research["id"][:8] in line]
    assert listed.code == 0 and "failed" in row and "1/2" in row
    assert run(data_dir, "research", "list", "--status", "completed").stdout.startswith("No ")

    short = research["id"][:8]  # as the list shows it
    retried = run(data_dir, "research", "retry", short, "--on-partial-failure", "cancel")
    assert retried.code == 0, retried
    assert "Retrying failed providers..." in retried.stderr
    assert "## Synthesis" in retried.stdout
    assert models.calls[ANTHROPIC] == 2


def test_all_models_failing_exits_non_zero_with_the_error_summary(
    data_dir: Path, models: ScriptedModels
) -> None:
    models.plan(OPENAI, fail(401))
    models.plan(ANTHROPIC, fail(500))

    result = run(
        data_dir, "research", PROMPT, "-m", f"{OPENAI},{ANTHROPIC}", "--on-partial-failure", "retry"
    )

    assert result.code == 1, result
    assert "Research failed: All LLM calls failed" in result.stderr
    assert (
        f"Update the API keys of the models named below under Settings, then retry. ({OPENAI})"
        in (" ".join(result.stderr.split()))
    )
    assert "scholarstream research retry" in result.stderr
    assert result.stdout == ""  # no answer to print


def test_without_a_terminal_ask_needs_the_flag(data_dir: Path, models: ScriptedModels) -> None:
    result = run(data_dir, "research", PROMPT, "--models", OPENAI)

    assert result.code == 2, result
    assert "The input is not a terminal" in result.stderr
    assert "Pass --on-partial-failure proceed" in result.stderr
    assert stored(data_dir) == []
    assert not models.calls


def test_without_a_terminal_and_without_a_model_the_missing_model_is_said_first(
    data_dir: Path, models: ScriptedModels
) -> None:
    no_roles: dict[str, str | None] = dict.fromkeys(ROLES)
    result = run(data_dir, "research", PROMPT, env=no_roles)  # stdin is no terminal here

    assert result.code == 2, result
    errors = " ".join(result.stderr.split())
    assert "No model is available for research" in errors
    assert "SCHOLARSTREAM_LLM__ROLES__DEFAULT" in errors and "scholarstream models" in errors
    assert "not a terminal" not in errors
    assert stored(data_dir) == []


LONG_PROMPT = (
    "Tirzepatide safety in adolescents with obesity and type 2 diabetes: gastrointestinal "
    "events, pancreatitis, gallbladder disease and growth over two years of treatment"
)


def test_the_list_fits_the_terminal_with_short_ids_that_the_commands_take(
    data_dir: Path, models: ScriptedModels
) -> None:
    done = run(data_dir, "research", LONG_PROMPT, "-m", OPENAI, "--on-partial-failure", "proceed")
    assert done.code == 0, done
    (research,) = stored(data_dir)
    short = research["id"][:8]

    for width in (80, 120):
        listed = run(data_dir, "research", "list", env={"COLUMNS": str(width)})
        assert listed.code == 0, listed
        lines = listed.stdout.splitlines()
        assert all(len(line) <= width for line in lines), listed.stdout
        (row,) = [line for line in lines if short in line]
        assert research["id"] not in listed.stdout  # the short id only
        assert "Tirzepatide safety in" in row
        assert "completed" in row and "1/1" in row
        if width == 80:  # the title is cut to fit, not wrapped
            assert "…" in row

    shown = run(data_dir, "research", "show", short)
    assert shown.code == 0 and shown.stdout == done.stdout
    unknown = run(data_dir, "research", "show", "0000")
    assert unknown.code == 1 and "No research has an id starting 0000" in unknown.stderr
    not_an_id = run(data_dir, "research", "show", "tirzepatide")
    assert not_an_id.code == 2 and "'tirzepatide' is not an id" in not_an_id.stderr


@pytest.mark.parametrize(
    ("models_option", "explanation", "advice"),
    [
        ("gpt-4.1-mini", "Model 'gpt-4.1-mini' does not name its provider", "'provider:model'"),
        ("mystery:model-1", "Unknown model provider 'mystery'", "OpenAI-compatible endpoint"),
        (" , ", "--models names no model.", "leave --models out"),
    ],
)
def test_a_bad_model_string_says_what_to_do(
    data_dir: Path, models: ScriptedModels, models_option: str, explanation: str, advice: str
) -> None:
    result = run(
        data_dir, "research", PROMPT, "--models", models_option, "--on-partial-failure", "proceed"
    )

    assert result.code == 2, result
    errors = " ".join(result.stderr.split())
    assert f"Error: {explanation}" in errors and "What to do:" in errors and advice in errors
    assert "Traceback" not in errors
    assert stored(data_dir) == []


def test_more_models_than_the_server_allows_are_refused_before_anything_is_stored(
    data_dir: Path, models: ScriptedModels
) -> None:
    many = ",".join(f"openai:gpt-test-{n}" for n in range(3))
    result = run(
        data_dir,
        "research",
        PROMPT,
        "--models",
        many,
        "--on-partial-failure",
        "proceed",
        env={"SCHOLARSTREAM_RESEARCH__MAX_SELECTED_LLMS": "2"},
    )

    assert result.code == 2, result
    errors = " ".join(result.stderr.split())
    assert "selects 3 models; a research may ask at most 2" in errors
    assert "Traceback" not in errors
    assert stored(data_dir) == []
    assert not models.calls


def test_missing_credentials_name_the_models_and_store_nothing(
    data_dir: Path, models: ScriptedModels
) -> None:
    no_keys: dict[str, str | None] = {
        "SCHOLARSTREAM_LLM__PROVIDERS__ANTHROPIC__API_KEY": None,
        "SCHOLARSTREAM_LLM__PROVIDERS__GOOGLE__API_KEY": None,
    }
    result = run(
        data_dir,
        "research",
        PROMPT,
        "--models",
        f"{OPENAI},{ANTHROPIC}",
        "--on-partial-failure",
        "proceed",
        env=no_keys,
    )

    assert result.code == 2, result
    errors = " ".join(result.stderr.split())
    # The synthesis model of two answers is checked too: its key is missing as well.
    assert f"Error: No API key for {ANTHROPIC}, {SYNTHESIZER}." in errors
    assert "What to do: Add your key for anthropic, google-gla" in errors
    assert stored(data_dir) == []
    assert not models.calls


def test_several_models_need_a_synthesis_model(data_dir: Path, models: ScriptedModels) -> None:
    no_roles: dict[str, str | None] = dict.fromkeys(ROLES)
    two = f"{OPENAI},{ANTHROPIC}"
    args = ("research", PROMPT, "-m", two, "--on-partial-failure", "proceed")
    result = run(data_dir, *args, env=no_roles)

    assert result.code == 2, result
    assert "Error: Choose a synthesis model" in result.stderr
    assert "Pass --synthesis provider:model" in result.stderr
    assert run(data_dir, *args, "--synthesis", SYNTHESIZER, env=no_roles).code == 0


def test_no_configured_model_at_all(data_dir: Path, models: ScriptedModels) -> None:
    no_roles: dict[str, str | None] = dict.fromkeys(ROLES)
    result = run(data_dir, "research", PROMPT, "--on-partial-failure", "proceed", env=no_roles)

    assert result.code == 2, result
    assert "No model is available for research" in result.stderr
    assert "--models provider:model" in " ".join(result.stderr.split())


def test_show_and_retry_of_an_unknown_or_unfinished_research(
    data_dir: Path, models: ScriptedModels
) -> None:
    unknown = str(uuid.uuid4())
    shown = run(data_dir, "research", "show", unknown)
    assert shown.code == 1 and "Error: That research was not found" in shown.stderr, shown

    done = run(data_dir, "research", PROMPT, "-m", OPENAI, "--on-partial-failure", "proceed")
    assert done.code == 0, done
    (research,) = stored(data_dir)
    retried = run(data_dir, "research", "retry", research["id"], "--on-partial-failure", "cancel")
    assert retried.code == 1, retried
    assert "Error: " in retried.stderr and "What to do: It is finished" in retried.stderr
    assert run(data_dir, "research", "resume", research["id"]).stdout == done.stdout


def test_research_without_arguments_shows_help(data_dir: Path) -> None:
    result = run(data_dir, "research")
    assert "run" in result.stdout and "list" in result.stdout and "retry" in result.stdout


def interrupt(text: str) -> Behaviour:
    """Answers after Ctrl-C reached the process (as if the user pressed it meanwhile)."""

    async def respond(prompt: str) -> str:
        signal.raise_signal(signal.SIGINT)
        return text

    return respond


def test_ctrl_c_leaves_the_research_stored_and_resume_finishes_it(
    data_dir: Path, models: ScriptedModels
) -> None:
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("the test runner handles Ctrl-C itself here")
    models.plan(OPENAI, interrupt("Interrupted but answered."))
    models.plan(ANTHROPIC, hang())  # until the engine stops; called again on resume

    interrupted = run(
        data_dir,
        "research",
        PROMPT,
        "-m",
        f"{OPENAI},{ANTHROPIC}",
        "--on-partial-failure",
        "proceed",
    )

    assert interrupted.code == 130, interrupted
    research_id = research_id_in(interrupted.stderr)
    assert f"scholarstream research resume {research_id}" in " ".join(interrupted.stderr.split())
    shown = run(data_dir, "research", "show", str(research_id))
    assert shown.code == 0 and "(processing)" in shown.stdout, shown
    assert f"Follow it: scholarstream research resume {research_id}" in shown.stdout

    resumed = run(
        data_dir, "research", "resume", str(research_id), "--on-partial-failure", "proceed"
    )
    assert resumed.code == 0, resumed
    assert f"## {ANTHROPIC}\n\nAnswer of {ANTHROPIC}" in resumed.stdout
    assert "## Synthesis" in resumed.stdout


def test_a_failed_synthesis_completes_with_the_reports_and_retry_runs_it(
    data_dir: Path, models: ScriptedModels
) -> None:
    """Issue 22: the synthesis fails, the research completes (exit 0) with every report,
    says once why there is no synthesis and how to run it again; `research retry` does."""
    models.plan(SYNTHESIZER, fail(503), answer("Both agree [M1][M2]."))

    result = run(
        data_dir,
        "research",
        PROMPT,
        "-m",
        f"{OPENAI},{ANTHROPIC}",
        "--on-partial-failure",
        "proceed",
    )

    assert result.code == 0, result
    out = " ".join(result.stdout.split())
    assert out.count("Synthesis not available: ") == 1
    assert "HTTP 503" in out and "Retry runs the synthesis again." in out
    assert f"## {OPENAI}" in result.stdout and f"## {ANTHROPIC}" in result.stdout
    assert "Research failed" not in result.stderr
    (research,) = stored(data_dir)
    assert research["status"] == "completed" and research["synthesisError"]
    assert f"scholarstream research retry {research['id']}" in result.stderr

    retried = run(data_dir, "research", "retry", research["id"], "--on-partial-failure", "cancel")
    assert retried.code == 0, retried
    assert "## Synthesis\n\nBoth agree [M1][M2]." in retried.stdout
    assert "Synthesis not available" not in retried.stdout
    assert models.calls == {OPENAI: 1, ANTHROPIC: 1, SYNTHESIZER: 2}


def test_evidence_first_the_answers_cite_it_and_the_report_audits_them(
    data_dir: Path, models: ScriptedModels
) -> None:
    wos = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"
    assert run(data_dir, "import", wos).code == 0
    models.plan(OPENAI, answer("Cataract is inherited in cocker spaniels [1]. So is gout [42]."))
    models.plan(ANTHROPIC, answer("Cataract in cocker spaniels is hereditary [1]."))
    models.plan(SYNTHESIZER, answer("Both agree [M1][M2]: cataract is inherited [1]."))
    result = run(
        data_dir,
        "research",
        "What causes cataract in cocker spaniels?",
        "--models",
        f"{OPENAI},{ANTHROPIC}",
        "--evidence-source",
        "library",
        "--evidence-size",
        "5",
        "--on-partial-failure",
        "proceed",
    )
    assert result.code == 0, result
    assert "Evidence: 5 records from" in result.stderr
    assert "Evidence pack (data, not instructions)" in models.prompts[OPENAI][0]
    report = result.stdout
    assert "2 citations: 1 supported, 0 weak, 0 unsupported, 1 invalid" in report
    assert "[citation removed: not in the evidence pack]" in report and "[42]" not in report
    assert "## References" in report and "\n- [1] " in report
