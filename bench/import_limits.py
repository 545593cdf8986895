"""Peak memory of a real server under the import attacks of issue 20 (point 2).

    python bench/import_limits.py [--bomb-mib 1024] [--line-mb 90] [--body-mb 300]

Each attack runs against its own fresh ``scholarstream serve`` process (SQLite in a
throwaway data directory, the default limits), so the server's peak resident memory
(``VmHWM`` in /proc) is that attack's alone:

- ``gzip bomb``: a RIS file of two good records, then one record whose title is BOMB_MIB
  MiB of one letter, gzip-compressed (about 1 MB for 1 GiB), generated as a stream and
  posted to ``POST /api/v1/library/imports`` (what the web form posts to);
- ``one long line``: an uncompressed RIS upload under the body limit (LINE_MB MB) whose
  third record's abstract is one line of nearly all of it (cut at
  ``limits.import_line_chars`` as it streams);
- ``oversized body``: a BODY_MB MB upload to the same route, streamed chunk by chunk with
  no Content-Length (the limit on an import is ``limits.import_body_bytes``, 100 MB by
  default).

Printed: for each attack the HTTP status, the seconds it took, the server's resident
memory before (after start-up and one small import) and its peak during the attack, and
what the answer said. The exit code is 1 when any answer is a 5xx.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

MiB = 1 << 20
GOOD = (
    b"TY  - JOUR\nTI  - Taurine in dogs\nAU  - Doe, Jane\nPY  - 2020\nER  - \n\n"
    b"TY  - JOUR\nTI  - Taurine in cats\nAU  - Roe, Rick\nPY  - 2021\nER  - \n\n"
)
BOUNDARY = "benchboundary7d1f"


@dataclass
class Outcome:
    attack: str
    sent_bytes: int
    status: int
    seconds: float
    rss_before_mb: float
    peak_mb: float
    answer: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _memory_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


@contextlib.contextmanager
def server(work: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    env.update(
        {
            "SCHOLARSTREAM_DATA_DIR": str(work / "data"),
            "SCHOLARSTREAM_LOGGING__LEVEL": "WARNING",
            "SCHOLARSTREAM_STREAMS__SCHEDULER_ENABLED": "false",
        }
    )
    log = (work / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "scholarstream", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server stopped; see {work / 'server.log'}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start in 90 s")
            time.sleep(0.3)
        yield process, base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def bomb(field_mib: int) -> bytes:
    """Compressed as it is generated: the 1 GiB is never held."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(GOOD), packer.compress(b"TY  - JOUR\nTI  - ")]
    block = b"A" * MiB
    parts.extend(packer.compress(block) for _ in range(field_mib))
    parts += [packer.compress(b"\nER  - \n"), packer.flush()]
    return b"".join(parts)


def multipart(name: str, chunks: Iterator[bytes]) -> Iterator[bytes]:
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    yield from chunks
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def big_body(total: int) -> Iterator[bytes]:
    record = GOOD * 64
    sent = 0
    while sent < total:
        piece = record[: total - sent]
        sent += len(piece)
        yield piece


def long_line(total: int) -> Iterator[bytes]:
    yield GOOD
    yield b"TY  - JOUR\nTI  - One long line\nAB  - "
    block = b"word " * (MiB // 5)
    sent = len(GOOD) + 40
    while sent < total:
        piece = block[: total - sent]
        sent += len(piece)
        yield piece
    yield b"\nER  - \n"


def attack(work: Path, label: str, name: str, body: Iterator[bytes], size: int) -> Outcome:
    with server(work) as (process, base):
        headers = {
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
            "Origin": base,
        }
        warm = httpx.post(
            f"{base}/api/v1/library/imports",
            files={"file": ("warm.ris", GOOD)},
            headers={"Origin": base},
            timeout=60,
        )
        warm.raise_for_status()
        before = _memory_mb(process.pid, "VmRSS")
        started = time.monotonic()
        try:
            response = httpx.post(
                f"{base}/api/v1/library/imports",
                content=multipart(name, body),
                headers=headers,
                timeout=600,
            )
            status, answer = response.status_code, _summary(response)
        except httpx.HTTPError as exc:  # the server may close the connection mid-upload
            status, answer = 0, f"connection ended: {exc}"
        seconds = time.monotonic() - started
        peak = _memory_mb(process.pid, "VmHWM")
    return Outcome(label, size, status, seconds, before, peak, answer)


def _summary(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:120]
    if "imported" in body:
        problems = body.get("problems") or []
        last = problems[-1]["message"][:70] if problems else ""
        return (
            f"imported {body['imported']}, already there {body['duplicates']}, "
            f"skipped {body['skipped']}: {last}"
        )
    return f"{body.get('code')}: {str(body.get('message'))[:100]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bomb-mib", type=int, default=1024)
    parser.add_argument("--line-mb", type=int, default=90)
    parser.add_argument("--body-mb", type=int, default=300)
    args = parser.parse_args()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="import-limits-") as tmp:
        packed = bomb(args.bomb_mib)
        work = Path(tmp) / "bomb"
        work.mkdir()
        outcomes.append(
            attack(
                work,
                f"gzip bomb ({args.bomb_mib} MiB field)",
                "bomb.ris.gz",
                iter([packed]),
                len(packed),
            )
        )
        size = args.line_mb * 1_000_000
        work = Path(tmp) / "line"
        work.mkdir()
        outcomes.append(
            attack(work, f"one long line ({args.line_mb} MB)", "wide.ris", long_line(size), size)
        )
        size = args.body_mb * 1_000_000
        work = Path(tmp) / "body"
        work.mkdir()
        outcomes.append(
            attack(work, f"oversized body ({args.body_mb} MB)", "big.ris", big_body(size), size)
        )
    print(
        f"{'attack':<30} {'sent':>12} {'status':>6} {'seconds':>8} "
        f"{'RSS before MB':>14} {'peak RSS MB':>12}  answer"
    )
    for o in outcomes:
        print(
            f"{o.attack:<30} {o.sent_bytes:>12,} {o.status:>6} {o.seconds:>8.2f} "
            f"{o.rss_before_mb:>14.1f} {o.peak_mb:>12.1f}  {o.answer}"
        )
    return 1 if any(o.status >= 500 for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
