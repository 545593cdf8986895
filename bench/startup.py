"""Start-up time of `scholarstream serve`: launch to the first 200 from /health.

Cold = a fresh data directory (migrations, DBOS system database, secret created);
warm = the same directory again. Also prints the server's resident memory once ready.

    python bench/startup.py [--runs 5] [--json bench/results/startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, default=Path("bench/results/startup.json"))
    args = parser.parse_args()

    cold: list[float] = []
    warm: list[float] = []
    rss: list[float] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            seconds, _ = start_once(data_dir)
            cold.append(seconds)
            seconds, mib = start_once(data_dir)
            warm.append(seconds)
            rss.append(mib)

    rows = {
        "cold start (s)": cold,
        "warm start (s)": warm,
        "RSS when ready (MiB)": rss,
    }
    print(f"{'measure':<24}{'median':>10}{'min':>10}{'max':>10}   runs={args.runs}")
    for name, values in rows.items():
        print(
            f"{name:<24}{statistics.median(values):>10.2f}{min(values):>10.2f}{max(values):>10.2f}"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({k: v for k, v in rows.items()}, indent=2))


if __name__ == "__main__":
    main()
