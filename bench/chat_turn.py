"""What storing the panel's conversation costs per chat turn (SPEC U5; goal: ≤ 5% of the
backend's CPU per turn). Run as part of ``relay_load`` (``--relay-chat-turns``, 0 to skip) or
alone: ``python -m bench.chat_turn [--turns 60 --rounds 3]``.

One turn is what the panel's chat does most: the user's message; the model (a local stand-in
on the real streamed wire format: server-sent ``chat.completion.chunk``s) calls
``page_inspect``; a fake page answers with a snapshot of 60 elements (~8 kB); the model streams
a 40-word answer. The backend is the real one (``create_app``: relay, audit journal, chat
loop, the ``openai`` client) in a thread of this process; the page and the model run in other
threads, whose CPU is left out: the figure is the backend's CPU (every thread but those two,
from ``/proc/self/task/*/stat``) divided by the turns.

Two stores, alternating per round, the same turns otherwise:

* **sqlite**: the product's store (``SqliteConversationStore`` on a file, WAL): each turn
  loads the newest entries and appends four (user, assistant with its tool call, the tool
  result, the answer), each on the store's thread;
* **memory**: the same interface over a dict, without JSON or SQLite: what the chat loop
  did before conversations were stored (history in process memory).

The difference is the storage's cost; the ratio is its share of a turn. On a busy machine
the two whole-turn figures move by more than the storage costs, so the storage is also
measured alone: the store calls of the same turns (load the newest entries, append the four,
with the same snapshot and answer), in a loop on a fresh store, as process CPU per turn
(``isolatedMsPerTurn``); its share is taken of the in-memory turn (``isolatedShare``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

NAME = "chat_turn"
DESCRIPTION = "backend CPU per panel chat turn, with the stored conversation vs in memory"
USER, AGENT, ORIGIN = "bench-user", "bench-agent", "http://127.0.0.1:9"
ANSWER_WORDS = 40
ELEMENTS = 60


class MemoryStore:
    """The store interface over a dict: no serialization, no database (the baseline)."""

    def __init__(self) -> None:
        self._entries: dict[Any, list[dict[str, Any]]] = {}

    async def current(self, key: Any, limit: int = 400) -> Any:
        from mao_embed.conversations import Conversation

        entries = self._entries.get(key)
        return Conversation("cv-memory" if entries else None, list(entries or [])[-limit:])

    async def append(self, key: Any, conversation_id: str | None, entries: Sequence[Any]) -> str:
        self._entries.setdefault(key, []).extend(entries)
        return "cv-memory"

    async def start_new(self, key: Any) -> str:
        self._entries.pop(key, None)
        return "cv-memory"

    async def delete(self, key: Any) -> int:
        return 1 if self._entries.pop(key, None) is not None else 0

    async def purge_expired(self) -> int:
        return 0

    async def aclose(self) -> None:
        return None


def _model_app() -> Any:
    """A chat-completions stand-in: a tool call when the user spoke last, else an answer,
    both streamed as server-sent chunks."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(body)}\n\n"

    async def completions(request: Request) -> StreamingResponse:
        body = await request.json()

        async def stream() -> Any:
            yield chunk({"role": "assistant", "content": ""})
            if body["messages"][-1]["role"] == "user":
                yield chunk({"tool_calls": [{"index": 0, "id": f"call_{len(body['messages'])}",
                             "type": "function",
                             "function": {"name": "page_inspect", "arguments": ""}}]})
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})
                yield chunk({}, "tool_calls")
            else:
                for word in range(ANSWER_WORDS):
                    yield chunk({"content": f"word{word} "})
                yield chunk({}, "stop")
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def _snapshot_result(request: Any) -> Any:
    from mao_page.protocol import PageToolResult

    elements = [
        {"elementId": f"e{i}", "kind": "interactive", "role": "textbox", "label": f"Field {i}",
         "value": "", "visible": True, "inViewport": True,
         "rect": {"x": 10, "y": 30 * i, "width": 200, "height": 24}}
        for i in range(ELEMENTS)
    ]
    return PageToolResult(request_id=request.request_id, success=True, page_version="v1",
                          snapshot_id="s1", result={"snapshotId": "s1", "elements": elements})


def _task_cpu_s(exclude: set[int]) -> float:
    """CPU seconds (user + system) of this process's threads but ``exclude``."""
    total = 0
    for name in os.listdir("/proc/self/task"):
        if int(name) in exclude:
            continue
        try:
            with open(f"/proc/self/task/{name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # a thread that just ended
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def _page(url: str, token: str, turns: int, exclude: set[int]) -> dict[str, float]:
    """The fake page: answers tool requests, sends the messages, counts the turns."""
    import websockets
    from mao_page.protocol import (
        PROTOCOL_VERSION,
        ChatEvent,
        ChatEventKind,
        PageToolRequest,
        parse_server_message,
    )

    async with websockets.connect(url, origin=ORIGIN, max_size=None) as socket:  # type: ignore[arg-type]
        await socket.send(json.dumps({
            "type": "hello", "protocolVersion": PROTOCOL_VERSION, "token": token,
            "agentId": AGENT, "user": {"id": USER}, "page": {"url": ORIGIN + "/", "title": "t"},
        }))
        parse_server_message(await socket.recv())
        done = asyncio.Queue[None]()

        async def read() -> None:
            async for raw in socket:
                message = parse_server_message(raw)
                if isinstance(message, PageToolRequest):
                    await socket.send(_snapshot_result(message).to_json())
                elif isinstance(message, ChatEvent) and message.kind is ChatEventKind.DONE:
                    done.put_nowait(None)

        reader = asyncio.get_running_loop().create_task(read())
        try:
            async def turn(index: int) -> None:
                await socket.send(json.dumps(
                    {"type": "chat_message", "text": f"Fill in the form, part {index}"}
                ))
                await asyncio.wait_for(done.get(), 30)

            for index in range(5):  # warm-up: connections, caches, the first schema builds
                await turn(index)
            started_cpu, started = _task_cpu_s(exclude), time.perf_counter()
            for index in range(turns):
                await turn(index)
            return {"cpuS": _task_cpu_s(exclude) - started_cpu,
                    "wallS": time.perf_counter() - started}
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def _measure(store: str, turns: int, tmp: Path) -> dict[str, Any]:
    import uvicorn
    from mao_embed.config import LlmConfig, ServerConfig
    from mao_embed.server import start_in_thread
    from mao_embed.testing import random_secret

    model_server = uvicorn.Server(uvicorn.Config(_model_app(), host="127.0.0.1", port=0,
                                                 log_level="warning", lifespan="off"))
    model_thread = threading.Thread(target=model_server.run, name="bench-model", daemon=True)
    model_thread.start()
    while not model_server.started:
        time.sleep(0.01)
    port = model_server.servers[0].sockets[0].getsockname()[1]
    config = ServerConfig(
        host="127.0.0.1", port=0, secret=random_secret(), allowed_origins=(ORIGIN,),
        db_path=tmp / f"audit-{store}-{time.monotonic_ns()}.db",
        llm=LlmConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m"),
    )
    patch = (
        mock.patch("mao_embed.app._conversation_store", lambda config: MemoryStore())
        if store == "memory" else contextlib.nullcontext()
    )
    with patch:
        server = start_in_thread(replace(config))
    try:
        token = server.issue_token(USER, AGENT, origin=ORIGIN)
        exclude = {threading.main_thread().native_id, model_thread.native_id or 0}
        figures = asyncio.run(_page(server.ws_url, token, turns, exclude))
    finally:
        server.stop()
        model_server.should_exit = True
        model_thread.join(timeout=10)
    return {"store": store, "turns": turns, **figures,
            "cpuMsPerTurn": figures["cpuS"] * 1000 / turns}


async def _store_turns(path: Path, turns: int, redis_url: str | None = None) -> float:
    """CPU seconds of the store calls ``turns`` chat turns make, on a fresh file (or, with
    ``redis_url``, the cluster's store on that Redis under a fresh namespace; Redis's own CPU
    is not counted)."""
    from mao_embed.conversations import ConversationKey, SqliteConversationStore
    from mao_embed.conversations.store import MAX_STORED_ENTRIES

    store: Any
    if redis_url is None:
        store = SqliteConversationStore(path)
    else:
        from mao_embed.conversations.redis_store import RedisConversationStore
        from mao_embed.relay.redis_link import client_for

        store = RedisConversationStore(client_for(redis_url), f"bench-{time.monotonic_ns()}")
    key = ConversationKey(USER, ORIGIN, AGENT)
    snapshot = _snapshot_result(type("R", (), {"request_id": "r"})()).to_json()
    answer = "".join(f"word{word} " for word in range(ANSWER_WORDS))

    async def turn(index: int) -> None:
        conversation = await store.current(key, limit=80)
        cid = conversation.conversation_id
        call = {"id": f"call_{index}", "type": "function",
                "function": {"name": "page_inspect", "arguments": "{}"}}
        for entry in (
            {"m": {"role": "user", "content": f"Fill in the form, part {index}"}},
            {"m": {"role": "assistant", "content": "", "tool_calls": [call]}},
            {"m": {"role": "tool", "tool_call_id": call["id"], "content": snapshot},
             "tool": "page_inspect", "ok": True, "code": None},
            {"m": {"role": "assistant", "content": answer}},
        ):
            entry["at"] = time.time() * 1000
            cid = await store.append(key, cid, [entry])

    for index in range(5):
        await turn(index)
    started = time.process_time()
    for index in range(turns):
        await turn(index)
    spent = time.process_time() - started
    await store.aclose()
    assert MAX_STORED_ENTRIES >= 4
    return spent


def measure(turns: int = 60, rounds: int = 3, log: Any = print) -> dict[str, Any]:
    results = []
    with tempfile.TemporaryDirectory(prefix="mao-chat-turn-") as tmp:
        for round_index in range(rounds):
            order = ("sqlite", "memory") if round_index % 2 == 0 else ("memory", "sqlite")
            for store in order:
                log(f"[chat_turn] {store}: {turns} turns, round {round_index + 1}/{rounds}")
                result = _measure(store, turns, Path(tmp))
                result["round"] = round_index
                results.append(result)
        isolated = []
        for round_index in range(rounds):
            spent = asyncio.run(_store_turns(Path(tmp) / f"alone-{round_index}.db", turns * 3))
            isolated.append(spent * 1000 / (turns * 3))
    median = {
        store: statistics.median(r["cpuMsPerTurn"] for r in results if r["store"] == store)
        for store in ("sqlite", "memory")
    }
    alone = statistics.median(isolated)
    return {
        "config": {"turns": turns, "rounds": rounds, "answerWords": ANSWER_WORDS,
                   "snapshotElements": ELEMENTS},
        "summary": {
            "cpuMsPerTurn": median,
            "storageMsPerTurn": median["sqlite"] - median["memory"],
            "storageShare": (median["sqlite"] - median["memory"]) / median["sqlite"],
            "isolatedMsPerTurn": alone,
            "isolatedShare": alone / median["memory"],
        },
        "isolatedMsPerTurnPerRound": isolated,
        "results": results,
    }


def summary_table(result: dict[str, Any]) -> str:
    summary = result["summary"]
    cpu = summary["cpuMsPerTurn"]
    return (
        "chat turn: backend CPU per turn (median of rounds)\n"
        f"  stored (sqlite) {cpu['sqlite']:.2f} ms · in memory {cpu['memory']:.2f} ms · "
        f"storage {summary['storageMsPerTurn']:.2f} ms = {summary['storageShare']:.1%} of a turn\n"
        f"  storage alone: {summary['isolatedMsPerTurn']:.2f} ms per turn = "
        f"{summary['isolatedShare']:.1%} of an in-memory turn"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.chat_turn")
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--redis-store", metavar="URL",
                        help="only time the store calls of a turn on the Redis store at URL")
    args = parser.parse_args(argv)
    if args.redis_store:
        with tempfile.TemporaryDirectory() as tmp:
            rounds = [asyncio.run(_store_turns(Path(tmp), args.turns * 3, args.redis_store))
                      * 1000 / (args.turns * 3) for _ in range(args.rounds)]
        print(f"redis store alone: {statistics.median(rounds):.2f} ms per turn "
              f"(rounds {', '.join(f'{r:.2f}' for r in rounds)})")
        return 0
    result = measure(args.turns, args.rounds, log=lambda *a: print(*a, file=sys.stderr))
    if args.output is not None:
        args.output.write_text(json.dumps({"benchmark": NAME, **result}, indent=1) + "\n")
    print(summary_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
