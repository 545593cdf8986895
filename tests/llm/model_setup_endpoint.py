"""A small OpenAI-compatible server on loopback for the model-setup tests: ``GET /v1/models``
lists its models, and a chat completion answers as a capable local server does: JSON that
fits the schema for ``response_format``, a real tool call when tools are required, else
text (streamed when asked). ``tools=False`` answers a request with tools as llama-server
without ``--jinja`` does (HTTP 500 "tools param requires --jinja flag")."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Endpoint:
    base_url: str
    models: list[str]
    answer: str
    tools: bool = True
    requests: list[dict[str, Any]] = field(default_factory=list)


def _completion(model: str, message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-setup",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


@contextmanager
def model_endpoint(
    models: tuple[str, ...] = ("tiny-instruct",),
    answer: str = "Hello from the endpoint.",
    *,
    tools: bool = True,
) -> Iterator[Endpoint]:
    state = Endpoint(base_url="", models=list(models), answer=answer, tools=tools)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                self._json(404, {"error": {"message": "not found"}})
                return
            self._json(200, {"object": "list", "data": [{"id": m} for m in state.models]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append(body)
            model = body.get("model", "")
            if body.get("tools") and not state.tools:
                self._json(
                    500,
                    {
                        "error": {
                            "code": 500,
                            "message": "tools param requires --jinja flag",
                            "type": "server_error",
                        }
                    },
                )
                return
            if body.get("response_format", {}).get("type") == "json_schema":
                message: dict[str, Any] = {"role": "assistant", "content": '{"answer": 5}'}
                finish = "stop"
            elif body.get("tools") and body.get("tool_choice") == "required":
                name = body["tools"][0]["function"]["name"]
                message = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": name, "arguments": '{"answer": 5}'},
                        }
                    ],
                }
                finish = "tool_calls"
            else:
                message, finish = {"role": "assistant", "content": state.answer}, "stop"
            if body.get("stream"):
                self._stream(model, message, finish)
            else:
                self._json(200, _completion(model, message, finish))

        def _stream(self, model: str, message: dict[str, Any], finish: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            delta = {k: v for k, v in message.items() if v is not None}
            for chunk in (
                {"index": 0, "delta": delta, "finish_reason": None},
                {"index": 0, "delta": {}, "finish_reason": finish},
            ):
                data = {
                    "id": "chatcmpl-setup",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [chunk],
                }
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
