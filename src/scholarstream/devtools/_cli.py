"""``python -m scholarstream.devtools.fake_openai``: the development provider as a process,
for trying the product by hand without a model (and without a network)."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from scholarstream.devtools._modes import MODES, parse_modes
from scholarstream.devtools._replies import Auto
from scholarstream.devtools._server import DEFAULT_MODELS, FakeOpenAI, start

DEFAULT_PORT = 8089
PROVIDER = "dev"
"""The provider name the printed settings give the server (model strings ``dev:<model>``)."""


def _parser() -> argparse.ArgumentParser:
    modes = "\n".join(
        f"  {spec.name}{'[=' + spec.value_help + ']' if spec.value_help else ''}\n      {spec.help}"
        for spec in MODES.values()
    )
    parser = argparse.ArgumentParser(
        prog="python -m scholarstream.devtools.fake_openai",
        description="ScholarStream's development provider: an OpenAI-compatible server that "
        "answers like a capable model (text, tool calls, JSON-schema output) without one, "
        "or fails the way real local servers fail.",
        epilog=f"modes (repeat --mode, or separate them with commas):\n{modes}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0: any free port)")
    parser.add_argument(
        "--mode",
        action="append",
        default=[],
        metavar="MODE[=VALUE]",
        help="a failure mode (see below)",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="ID",
        help=f"a model id to list in /v1/models (default: {', '.join(DEFAULT_MODELS)})",
    )
    parser.add_argument("--api-key", help="require this bearer key (else HTTP 401)")
    parser.add_argument(
        "--delay",
        type=float,
        default=0.05,
        metavar="SECONDS",
        help="seconds between streamed pieces (default 0.05)",
    )
    parser.add_argument("--quiet", action="store_true", help="print no line per request")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    texts = [part.strip() for text in args.mode for part in text.split(",") if part.strip()]
    down = "down" in texts
    try:
        modes = parse_modes([t for t in texts if t != "down"])
    except ValueError as error:
        parser.error(str(error))
    models = tuple(args.model) or DEFAULT_MODELS
    fake = FakeOpenAI(
        models=models,
        fallback=Auto(delay=args.delay),
        api_key=args.api_key,
        log=None if args.quiet else _print_err,
    )
    fake.set_modes(modes)
    if down:
        fake.host, fake.port = args.host, args.port
        _print_settings(fake, models[0], texts)
        print(
            "Mode down: nothing listens there, so the product's requests are refused "
            "(connection refused). Start this again without --mode down to serve.",
            flush=True,
        )
        return 0
    try:
        server = start(fake, args.host, args.port)
    except OSError as error:
        print(
            f"Cannot listen on {args.host}:{args.port} ({error.strerror or error}). "
            "Is another server using the port? Choose another with --port.",
            file=sys.stderr,
        )
        return 2
    _print_settings(fake, models[0], texts)
    print("Ctrl-C stops it.", flush=True)
    # Both stop it cleanly, even when started in the background of a script (where a shell
    # has SIGINT ignored, and Python then raises no KeyboardInterrupt on its own).
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._stopping.set()  # answers in progress end now
        server.server_close()
    print("Development provider stopped.", flush=True)
    return 0


def _print_settings(fake: FakeOpenAI, model: str, modes: list[str]) -> None:
    print(
        "ScholarStream development provider (OpenAI-compatible) at " + fake.base_url,
        f"Models: {', '.join(fake.known_models())}",
        f"Modes: {', '.join(modes) if modes else 'none (answers like a capable model)'}",
        "Point ScholarStream at it (in the environment of `scholarstream serve`):",
        f"  export SCHOLARSTREAM_LLM__PROVIDERS__{PROVIDER.upper()}__BASE_URL={fake.base_url}",
        f"  export SCHOLARSTREAM_LLM__ROLES__DEFAULT={PROVIDER}:{model}",
        sep="\n",
        flush=True,
    )
    if fake.api_key:
        print(
            f"  export SCHOLARSTREAM_LLM__PROVIDERS__{PROVIDER.upper()}__API_KEY=<the key>",
            flush=True,
        )


def _print_err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM stops as cleanly as Ctrl-C
