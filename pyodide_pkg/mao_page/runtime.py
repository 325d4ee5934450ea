"""Entry point called by the loader: wires bridge, tools, supervisor, dispatcher and the
connection (whose transport, the socket, the loader runs: ``loader_js/transport.js``).

The agent's requests go dispatcher -> ``Controller._run_tool`` (the supervisor opens the
task or refuses) -> ``PageTools`` -> executor, whose ``authorize`` and ``on_step`` hooks are
the supervisor's. The user's panel input goes bridge -> ``Supervisor.on_ui``.
"""

from __future__ import annotations

import time

from .bridge import browser as bridge
from .protocol import (
    ErrorCode,
    PageAuditEvent,
    PageToolRequest,
    PageToolResult,
    ToolError,
)
from .session.connection import PageConnection
from .session.dispatcher import Dispatcher
from .session.tools import PageTools
from .sitetools.runner import SiteToolRunner
from .snapshot.store import ElementEntry, SnapshotStore
from .supervision import i18n
from .supervision.authorization import (
    AuthorizationCenter,
    GrantKey,
    GrantStore,
    OptionsError,
    parse_host_policy,
)
from .supervision.risk import Target
from .supervision.supervisor import Supervisor

# The transport's states (loader_js/transport.js) the panel shows; "connected" leaves the
# status to the supervisor.
_CONNECTION_STATUS = {
    "connecting": ("starting", "status.connecting"),
    "backing_off": ("starting", "status.connecting"),
    "refused": ("error", "status.refused"),
}


class Controller:
    """One running SDK instance; ``stop()`` is what ``MaoChat.destroy()`` calls."""

    def __init__(self) -> None:
        api = bridge.current_host_api()
        self._api = api
        self.host = bridge.Host(api)
        try:
            policy = parse_host_policy(bridge.option(api, "authorization"))
        except OptionsError as error:
            self.host.signal_failure("invalid_options", f"MaoChat.init: {error}")
            raise
        self.page = bridge.BrowserPage(api)
        self.store = SnapshotStore(document_tag=bridge.tab_document_tag(api))
        self.panel = bridge.PanelView(api)
        self.input_watch = bridge.InputWatch(api, lambda kind: self.supervisor.on_takeover())
        origin = bridge.page_origin(api)
        grants = GrantStore(
            bridge.BrowserStorage(api),
            GrantKey.of(
                server_url=self.host.server_url,
                user_id=self.host.user_id,
                origin=origin,
                agent_id=self.host.agent_id,
                actions=policy.actions,
                policy_version=policy.policy_version,
            ),
        )
        self.center = AuthorizationCenter(
            grants, policy, on_change=lambda change: self.supervisor.on_level_change(change)
        )
        self.supervisor = Supervisor(
            center=self.center,
            ui=self.panel,
            page_origin=origin,
            describe_target=self._describe_target,
            audit=self._audit,
            arm_takeover=self.input_watch.arm,
            send_chat=lambda text, message_id: self.connection.send_chat(text, message_id),
            cancel_running=lambda reason: self.dispatcher.cancel_all(reason),
            send_chat_control=lambda action: self.connection.send_chat_control(action),
            describe_focus=self._describe_focus,
            publish_task=lambda record: bridge.publish_task(api, record),
        )
        self.tools = PageTools(
            self.page,
            self.store,
            authorize=self.supervisor.authorize,
            on_step=self.supervisor.on_step,
            on_acting=self.supervisor.on_acting,
            ask_user=self.supervisor.ask_user,
        )
        self.tools.screenshots.unmasked_policy = self.supervisor
        self.tools.sensitive_release = self.supervisor
        self.tools.site_tools = SiteToolRunner(
            bridge.SiteToolBridge(api),
            authorize=self.supervisor.authorize_site_tool,
            users_turn=self.supervisor.users_turn,
        )
        self.dispatcher = Dispatcher(self._run_tool, lambda data: None, self.tools.page_version)
        self._ready_signalled = False
        self.transport = bridge.PageTransport(api)
        self.connection = PageConnection(
            self.dispatcher,
            self.transport.send,
            on_chat_event=self.supervisor.on_chat_event,
            on_chat_history=self.supervisor.on_chat_history,
        )
        self.panel.connect(self.supervisor.on_ui)
        # SPEC B7: the task the tab's previous page handed over, when its own action led here.
        continuation = bridge.tab_continuation(api)
        if continuation is not None:
            session_id = continuation.get("sessionId")
            self.supervisor.continue_task(
                continuation, str(session_id) if isinstance(session_id, str) else None
            )

    async def _run_tool(self, request: PageToolRequest) -> PageToolResult:
        refusal = self.supervisor.begin_request(request)
        if refusal is not None:
            return refusal.model_copy(update={"page_version": self.tools.page_version()})
        began = time.monotonic()
        began_ms = bridge.now_ms()
        result: PageToolResult | None = None
        try:
            result = await self.tools.run(request)
            return result
        finally:
            if result is None:  # cancelled or timed out: the dispatcher answers for it
                result = PageToolResult(
                    request_id=request.request_id,
                    success=False,
                    error=ToolError(code=ErrorCode.CANCELLED, message="cancelled or timed out"),
                )
            self.supervisor.end_request(request, result, (time.monotonic() - began) * 1000)
            bridge.measure(f"mao:{request.tool}", began_ms)

    def _describe_target(self, entry: ElementEntry) -> Target:
        in_form, form_action, _method, kind, text, _private = bridge.risk_facts(
            self._api, entry.handle
        )
        return Target(
            role=entry.role,
            tag=entry.tag,
            type=kind or entry.type,
            label=entry.label,
            text=text,
            sensitive=entry.sensitive,
            in_form=in_form,
            form_action=form_action,
        )

    def _describe_focus(self) -> tuple[bridge.ElementHandle, Target] | None:
        """The element page_keyboard without a ref types into, for the risk rules and the card."""
        handle = self.page.active_element()
        if handle is None:
            return None
        described = self.tools.inspector.describe(handle)
        if described is None:
            return None
        in_form, form_action, _method, kind, text, private = bridge.risk_facts(self._api, handle)
        return handle, Target(
            role=described.role,
            tag=described.tag,
            type=kind or described.type,
            label=described.label,
            text=text,
            sensitive=described.sensitive or private,
            in_form=in_form,
            form_action=form_action,
        )

    def _audit(self, event: PageAuditEvent) -> None:
        detail = event.to_wire()
        detail.pop("type", None)
        self.host.emit("audit", detail)
        self.connection.send_audit(event)

    def _on_welcome(self, session_id: str) -> None:
        self.connection.welcomed(session_id)
        self.supervisor.session_changed(session_id)
        self.supervisor.refresh()
        # The stored conversation (SPEC U5), shown once the runtime runs: booting is what
        # opening the panel does, so a page view that never opens it never asks.
        self.supervisor.load_history()
        if not self._ready_signalled:
            self._ready_signalled = True
            self.host.signal_ready(session_id)

    def _on_dropped(self, reason: str) -> None:
        bridge.warn(f"connection to the backend ended: {reason}; reconnecting")
        self.connection.dropped()

    def _on_refused(self, code: str, message: str, _final: bool) -> None:
        self.host.emit("error", {"code": str(code), "message": message})
        self.panel.show_error(f"{code}: {message}")
        if not self._ready_signalled:
            self.host.signal_failure(
                str(code), f"Mao Embed was refused by the server ({code}): {message}"
            )

    def _on_state(self, state: str) -> None:
        if state in _CONNECTION_STATUS:
            status, key = _CONNECTION_STATUS[state]
            self.panel.set_status(status, i18n.text(self.panel.locale, key))

    def start(self) -> None:
        """Take over the loader's connection: the frames that waited for the boot first."""
        self.transport.attach(
            welcome=self._on_welcome,
            frame=self.connection.receive,
            dropped=self._on_dropped,
            refused=self._on_refused,
            state=self._on_state,
            returned=self.supervisor.user_navigated,
        )

    def stop(self) -> None:
        self.supervisor.close()
        self.transport.close()
        self.dispatcher.cancel_all("the SDK was stopped")
        self.store.invalidate_all()
        self.input_watch.close()
        self.panel.close()
        self.page.close()


async def boot() -> Controller:
    controller = Controller()
    controller.start()
    return controller
