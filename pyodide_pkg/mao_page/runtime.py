"""Entry point called by the loader: wires bridge, tools, dispatcher and client together."""

from __future__ import annotations

import asyncio

from . import __version__, bridge
from .client import ClientState, Identity, SdkClient
from .dispatcher import Dispatcher
from .protocol import PageInfo
from .snapshots import SnapshotStore
from .tools import PageTools

_STATUS_TEXT = {
    ClientState.CONNECTING: ("starting", "connecting"),
    ClientState.BACKING_OFF: ("starting", "reconnecting"),
    ClientState.REFUSED: ("error", "refused by the server"),
    ClientState.STOPPED: ("starting", "stopped"),
}


class Controller:
    """One running SDK instance; ``stop()`` is what ``MaoChat.destroy()`` calls."""

    def __init__(self) -> None:
        api = bridge.current_host_api()
        self.host = bridge.Host(api)
        self.page = bridge.Page(api)
        self.store = SnapshotStore()
        self.tools = PageTools(self.page, self.store)
        self.dispatcher = Dispatcher(self.tools.run, lambda data: None, self.tools.page_version)
        self._ready_signalled = False
        self.client = SdkClient(
            url=bridge.websocket_url(self.host.server_url),
            identity=Identity(
                agent_id=self.host.agent_id,
                user_id=self.host.user_id,
                user_name=self.host.user_name,
                sdk_version=__version__,
                token_refreshable=self.host.token_is_function,
            ),
            connect=bridge.BrowserWebSocket,
            token=self.host.token,
            page_info=self._page_info,
            dispatcher=self.dispatcher,
            on_ready=self._on_ready,
            on_refused=self._on_refused,
            on_state=self._on_state,
        )
        self._task: asyncio.Task[None] | None = None

    def _page_info(self) -> PageInfo:
        url, title = self.host.location()
        return PageInfo(url=url[:8192], title=title[:2000])

    def _on_ready(self, session_id: str) -> None:
        self.host.set_status("ready", "page tools ready")
        if not self._ready_signalled:
            self._ready_signalled = True
            self.host.signal_ready(session_id)
        self.host.emit("session", {"sessionId": session_id})

    def _on_refused(self, code: str, message: str) -> None:
        self.host.emit("error", {"code": str(code), "message": message})
        if not self._ready_signalled:
            self.host.signal_failure(str(code), f"Mao Embed was refused by the server ({code}): {message}")

    def _on_state(self, state: ClientState) -> None:
        if state in _STATUS_TEXT:
            self.host.set_status(*_STATUS_TEXT[state])

    def start(self) -> None:
        self._task = asyncio.get_event_loop().create_task(self.client.run())

    def stop(self) -> None:
        self.client.stop()
        if self._task is not None:
            self._task.cancel()
        self.store.invalidate_all()
        self.page.close()


async def boot() -> Controller:
    controller = Controller()
    controller.start()
    return controller
