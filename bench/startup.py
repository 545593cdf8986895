"""Start-up times: the command line's help, and ``scholarstream serve``.

The command line (issue 21): the wall time of ``scholarstream --help`` and of
``scholarstream <command> --help`` for every command, each against the baseline
``python -c "import typer, rich"`` (what any Typer + Rich program pays). The target: at
most 3 times the baseline. Runs are interleaved (the baseline, then every command, then
again) so that a busy machine slows them alike; each figure is the median of --runs.
Two reference rows, "typer floor", time a minimal Typer app with the same root options and
one command: what Typer and Rich cost before any of our code (help rendering imports
rich.markdown; options are coerced through pydantic before a command's --help).

``--serve`` also measures ``scholarstream serve``: launch to the first 200 from /health,
cold (a fresh data directory: migrations, DBOS system database, secret created) and warm
(the same directory again), and the server's resident memory once ready.

    python bench/startup.py [--runs 7] [--subcommands] [--src DIR]
                            [--serve] [--serve-runs 5] [--json bench/results/startup.json]

``--src DIR`` measures another source tree (e.g. an older checkout's ``src``) with the
same interpreter and packages, for before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

TARGET_RATIO = 3.0
BASELINE = "python -c 'import typer, rich'"
FLOOR = "typer floor: app"

# The least any Typer app pays for the same help: the root options of ``scholarstream``
# (which Typer coerces through pydantic before a command's --help) and one command. Shown
# for reference (what Typer and Rich cost), not held to the target.
_FLOOR_APP = """
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="The floor.", no_args_is_help=True)


@app.callback()
def root(
    config: Annotated[Path | None, typer.Option("--config", help="A file.")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="A folder.")] = None,
    log_format: Annotated[str | None, typer.Option("--log-format", help="A word.")] = None,
    log_level: Annotated[str | None, typer.Option("--log-level", help="A word.")] = None,
) -> None:
    \"\"\"The root.\"\"\"


@app.command()
def command(
    text: Annotated[str, typer.Argument(help="Some text.")],
    limit: Annotated[int, typer.Option(min=1, help="A number.")] = 20,
) -> None:
    \"\"\"One command.\"\"\"


@app.command()
def other() -> None:
    \"\"\"Another.\"\"\"


app()
"""


# --- the command line ---------------------------------------------------------------------


def _cli_env(data_dir: Path, src: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    env["SCHOLARSTREAM_DATA_DIR"] = str(data_dir)
    # Byte code written by the warm-up and read after, as in an installed package: without
    # it, every run compiles our modules again.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    return env


def _scholarstream() -> list[str]:
    """The installed console script (what users run), else ``python -m scholarstream``."""
    script = Path(sys.executable).with_name("scholarstream")
    if script.exists():
        return [str(script)]
    found = shutil.which("scholarstream")
    return [found] if found else [sys.executable, "-m", "scholarstream"]


def _commands(subcommands: bool) -> list[list[str]]:
    """Every command of the app (and, with ``subcommands``, every command of its groups)."""
    import typer.main

    from scholarstream.cli import app

    # Groups of Typer's own (vendored) Click: known by their ``commands``.
    root = typer.main.get_command(app)
    found: list[list[str]] = []
    for name, command in sorted(getattr(root, "commands", {}).items()):
        found.append([name])
        if subcommands:
            found.extend([name, sub] for sub in sorted(getattr(command, "commands", {})))
    return found


def _wall(argv: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr.decode(errors='replace')}")
    return seconds


def measure_cli(runs: int, subcommands: bool, src: Path | None) -> dict[str, list[float]]:
    """Wall seconds per run: the baseline first, then each help, in that order every run."""
    cli = _scholarstream()
    with tempfile.TemporaryDirectory() as tmp:
        floor = Path(tmp) / "floor.py"
        floor.write_text(_FLOOR_APP)
        cases: dict[str, list[str]] = {
            BASELINE: [sys.executable, "-c", "import typer, rich"],
            f"{FLOOR} --help": [sys.executable, str(floor), "--help"],
            f"{FLOOR} command --help": [sys.executable, str(floor), "command", "--help"],
            "scholarstream --help": [*cli, "--help"],
        }
        for words in _commands(subcommands):
            cases[f"scholarstream {' '.join(words)} --help"] = [*cli, *words, "--help"]
        times: dict[str, list[float]] = {name: [] for name in cases}
        env = _cli_env(Path(tmp) / "data", src)
        for argv in cases.values():  # a warm-up: byte code compiled, files in the page cache
            _wall(argv, env)
        for _ in range(runs):
            for name, argv in cases.items():
                times[name].append(_wall(argv, env))
    return times


def print_cli(times: dict[str, list[float]]) -> bool:
    baseline = statistics.median(times[BASELINE])
    width = max(len(name) for name in times) + 2
    print(f"{'command line':<{width}}{'median ms':>10}{'min ms':>9}{'ratio':>8}   target <= 3x")
    met = True
    for name, values in times.items():
        median = statistics.median(values)
        ratio = median / baseline
        verdict = "(reference)" if name.startswith(FLOOR) else ""
        if name != BASELINE and not verdict:
            ok = ratio <= TARGET_RATIO
            met = met and ok
            verdict = "ok" if ok else "OVER"
        print(
            f"{name:<{width}}{median * 1000:>10.1f}{min(values) * 1000:>9.1f}{ratio:>8.2f}"
            f"   {verdict}"
        )
    measured = [v for k, v in times.items() if k != BASELINE and not k.startswith(FLOOR)]
    worst = max(statistics.median(v) for v in measured) / baseline
    print(f"worst ratio {worst:.2f}: the 3x target is {'met' if met else 'NOT met'}")
    return met


# --- scholarstream serve ------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_once(data_dir: Path) -> tuple[float, float]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    env["SCHOLARSTREAM_DATA_DIR"] = str(data_dir)
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "scholarstream", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = began + 120
        while time.perf_counter() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    return time.perf_counter() - began, _rss_mib(proc.pid)
            except httpx.TransportError:
                time.sleep(0.02)
        raise SystemExit("serve did not become healthy within 120 s")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def measure_serve(runs: int) -> dict[str, list[float]]:
    cold: list[float] = []
    warm: list[float] = []
    rss: list[float] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            seconds, _ = start_once(data_dir)
            cold.append(seconds)
            seconds, mib = start_once(data_dir)
            warm.append(seconds)
            rss.append(mib)
    return {"cold start (s)": cold, "warm start (s)": warm, "RSS when ready (MiB)": rss}


def print_serve(rows: dict[str, list[float]], runs: int) -> None:
    print(f"{'serve':<24}{'median':>10}{'min':>10}{'max':>10}   runs={runs}")
    for name, values in rows.items():
        print(
            f"{name:<24}{statistics.median(values):>10.2f}{min(values):>10.2f}{max(values):>10.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command line")
    parser.add_argument(
        "--subcommands", action="store_true", help="also every subcommand of every group"
    )
    parser.add_argument("--src", type=Path, help="measure this source tree's command line")
    parser.add_argument("--serve", action="store_true", help="also measure scholarstream serve")
    parser.add_argument("--serve-runs", type=int, default=5)
    parser.add_argument("--json", type=Path, default=Path("bench/results/startup.json"))
    args = parser.parse_args()

    results: dict[str, dict[str, list[float]]] = {}
    results["cli"] = measure_cli(args.runs, args.subcommands, args.src)
    print(f"runs={args.runs}, python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print_cli(results["cli"])
    if args.serve:
        results["serve"] = measure_serve(args.serve_runs)
        print()
        print_serve(results["serve"], args.serve_runs)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
