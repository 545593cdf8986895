"""The import limits through every way in (issue 20, point 2): the API the web form posts
to, and the CLI. A decompression bomb, an over-long field and an over-large upload are
answered with the import summary (or 413), never 500."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from scholarstream.bootstrap import create_app
from scholarstream.cli import app
from scholarstream.db import upgrade
from scholarstream.settings import load_settings
from tests.helpers import make_runtime

MiB = 1 << 20
ORIGIN = {"Origin": "http://127.0.0.1"}  # what our own pages send


@pytest.fixture
def client_for(data_dir: Path) -> Iterator[Any]:
    clients: list[TestClient] = []

    def build(**limits: int) -> TestClient:
        settings = load_settings(data_dir=data_dir, limits=limits)
        upgrade(settings.app_database_url)
        client = TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1")
        client.__enter__()
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.__exit__(None, None, None)


def gzipped(parts: Iterable[bytes]) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join([*(packer.compress(part) for part in parts), packer.flush()])


GOOD = (
    b"TY  - JOUR\nTI  - Taurine in dogs\nAU  - Doe, Jane\nPY  - 2020\nER  - \n\n"
    b"TY  - JOUR\nTI  - Taurine in cats\nAU  - Roe, Rick\nPY  - 2021\nER  - \n\n"
)


def bomb(field_mib: int) -> Iterator[bytes]:
    """Two good records, then one whose title unpacks to ``field_mib`` MiB."""
    yield GOOD
    yield b"TY  - JOUR\nTI  - "
    block = b"A" * MiB
    for _ in range(field_mib):
        yield block
    yield b"\nER  - \n"


def one_overlong_field(abstract_chars: int) -> bytes:
    return (
        GOOD
        + f"TY  - JOUR\nTI  - Overlong\nAB  - {'w' * abstract_chars}\nER  - \n\n".encode()
        + b"TY  - JOUR\nTI  - Taurine in mice\nPY  - 2022\nER  - \n"
    )


def upload(client: TestClient, name: str, content: bytes) -> Any:
    return client.post("/api/v1/library/imports", files={"file": (name, content)}, headers=ORIGIN)


def test_a_gzip_bomb_gets_the_import_summary_not_500(client_for: Any) -> None:
    client = client_for()  # the default limits
    data = gzipped(bomb(256))
    assert len(data) < MiB
    response = upload(client, "bomb.ris.gz", data)
    assert response.status_code == 201, response.text
    report = response.json()
    assert (report["file"], report["imported"]) == ("bomb.ris.gz", 2)
    assert "decompression bomb" in report["problems"][-1]["message"]
    titles = [i["record"]["title"] for i in client.get("/api/v1/library/records").json()["items"]]
    assert sorted(titles) == ["Taurine in cats", "Taurine in dogs"]


def test_a_bomb_under_low_limits_is_bounded_by_size(client_for: Any) -> None:
    client = client_for(import_decompressed_bytes=4096, import_decompression_ratio=100_000)
    response = upload(client, "bomb.ris.gz", gzipped(bomb(64)))
    assert response.status_code == 201, response.text
    assert "more than 4,096 bytes" in response.json()["problems"][-1]["message"]


def test_an_overlong_field_is_reported_and_the_good_records_import(client_for: Any) -> None:
    client = client_for(import_field_chars=5000)
    response = upload(client, "mixed.ris", one_overlong_field(20_000))
    assert response.status_code == 201, response.text
    report = response.json()
    assert (report["file"], report["imported"], report["skipped"]) == ("mixed.ris", 3, 1)
    (problem,) = report["problems"]
    assert (problem["record_number"], problem["field"]) == (3, "abstract")
    assert "abstract field holds 20,000 characters" in problem["message"]


def test_an_upload_over_the_import_limit_is_refused_with_413(client_for: Any) -> None:
    client = client_for(import_body_bytes=4096)
    response = upload(client, "big.ris", GOOD * 100)
    assert response.status_code == 413, response.text
    body = response.json()
    assert body["code"] == "too_large"
    assert "smaller files" in body["message"] + (body["hint"] or "")
    assert upload(client, "small.ris", GOOD).status_code == 201


def test_the_cli_applies_the_same_limits(data_dir: Path, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.ris"
    mixed.write_bytes(one_overlong_field(20_000))
    packed = tmp_path / "bomb.ris.gz"
    packed.write_bytes(gzipped(bomb(64)))
    result = CliRunner().invoke(
        app,
        ["--data-dir", str(data_dir), "import", str(mixed), str(packed)],
        env={"SCHOLARSTREAM_LIMITS__IMPORT_FIELD_CHARS": "5000"},
    )
    assert result.exit_code == 0, result.output
    assert "mixed.ris (record 3): the abstract field holds 20,000" in " ".join(
        result.stderr.split()
    )
    assert "decompression bomb" in result.stderr
