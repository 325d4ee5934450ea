"""The runtime's side of the page's connection (SPEC W1-W4): what Python does with the frames
the transport hands it, and what it sends back.

The transport (hello, welcome, heartbeat, reconnect) is ``loader_js/transport.js`` in the
browser, so that a page registers its session before Python boots (SPEC E6);
``session.client.SdkClient`` is the same transport on CPython, for tests against a real
backend. Both hand this class every frame that is not their own, in the order received: the
split playwright-python makes between its transport and its connection.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from ..protocol import (
    Cancel,
    ChatAction,
    ChatControl,
    ChatEvent,
    ChatHistory,
    ChatMessage,
    PageAuditEvent,
    PageToolRequest,
    parse_server_message,
)
from .dispatcher import Dispatcher

# Sends one frame; False when the transport is not connected (nothing was sent).
Send = Callable[[str], bool]


class PageConnection:
    def __init__(
        self,
        dispatcher: Dispatcher,
        send: Send,
        *,
        on_chat_event: Callable[[ChatEvent], None] = lambda event: None,
        on_chat_history: Callable[[ChatHistory], None] = lambda history: None,
    ) -> None:
        self._dispatcher = dispatcher
        self._send = send
        self._on_chat_event = on_chat_event
        self._on_chat_history = on_chat_history

    def welcomed(self, session_id: str) -> None:
        """The transport is connected as ``session_id`` (again, after a reconnect)."""
        self._dispatcher.bind_session(session_id)
        self._dispatcher.replace_sender(self._send)

    def dropped(self) -> None:
        """The connection was lost: the running task stops (SPEC W3, U3). Its writes are
        reported "may have applied" by the backend and never replayed."""
        self._dispatcher.cancel_all("the connection to the backend was lost")

    def receive(self, raw: str, waited_ms: float = 0.0) -> None:
        """One frame from the backend. ``waited_ms``: how long it waited for the runtime to
        boot (a request's timeout counts from when the page received it)."""
        try:
            message = parse_server_message(raw)
        except ValidationError as error:
            self._dispatcher.reject_invalid(raw, error)
            return
        if isinstance(message, PageToolRequest):
            if waited_ms > 0:
                left = max(1, int(message.timeout_ms - waited_ms))
                message = message.model_copy(update={"timeout_ms": left})
            self._dispatcher.submit(message)
        elif isinstance(message, Cancel):
            self._dispatcher.cancel(message)
        elif isinstance(message, ChatEvent):
            self._on_chat_event(message)
        elif isinstance(message, ChatHistory):
            self._on_chat_history(message)
        # welcome, ping, pong and error are the transport's own frames.

    def send_chat(self, text: str, message_id: str | None = None) -> bool:
        """Send what the user typed in the panel to the backend's agent loop.

        False (nothing sent) while not connected: chat is not queued across reconnects, the
        panel tells the user instead. Raises ``ValidationError`` for empty or oversized text.
        """
        return self._send(ChatMessage(text=text, message_id=message_id).to_json())

    def send_chat_control(self, action: str) -> bool:
        """Ask for the stored conversation, start a new one, delete the user's, or stop the
        answer being written (SPEC U5, U3). False (nothing sent) while not connected."""
        return self._send(ChatControl(action=ChatAction(action)).to_json())

    def send_audit(self, event: PageAuditEvent) -> bool:
        """Report one authorization or action record for the backend's audit log (SPEC P6).

        False (nothing sent) while not connected; the page's SDK event has it either way.
        """
        return self._send(event.to_json())
