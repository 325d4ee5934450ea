"""Texts the runtime writes into the panel, in English and Simplified Chinese (SPEC U1).

The loader picks the locale before Python runs (``init`` option ``locale``, else the page's
``<html lang>``) and renders the panel's fixed controls in it; these are the texts that
change while the SDK runs: confirmation cards, the action log, status, errors. The fixed
controls' accessible names live in ``loader_js/primitives/ui.js`` and are documented in the
README ("Panel controls").
"""

from __future__ import annotations

from typing import Final

EN: Final = "en"
ZH: Final = "zh-CN"

_TEXTS: dict[str, dict[str, str]] = {
    EN: {
        "status.starting": "Starting",
        "status.idle": "Idle",
        "status.running": "Running",
        "status.waiting": "Waiting for you",
        "status.paused": "Paused",
        "status.stopped": "Stopped",
        "status.connecting": "Connecting",
        "status.refused": "Refused by the server",
        "level.per_action": "Ask each time",
        "level.task": "This task",
        "level.full": "Full access",
        "action.scroll": "Scroll",
        "action.focus": "Focus",
        "action.hover": "Hover",
        "action.drag": "Drag",
        "action.fill": "Fill in",
        "action.select": "Choose",
        "action.check": "Tick",
        "action.uncheck": "Untick",
        "action.click": "Click",
        "action.keyboard": "Press keys",
        "action.wait": "Wait",
        "action.observe": "Observe",
        "action.screenshot_unmasked": "Send a screenshot with sensitive fields visible",
        "action.snapshot_unmasked": "Send the values of sensitive fields (passwords, card data, "
        "codes)",
        "card.title": "The assistant wants to act on this page",
        "card.target.page": "the page",
        "card.target.site_tool": "the site's tool \u201c{name}\u201d",
        "action.site_tool": "Run a tool of this site",
        "card.value": "Value",
        "card.risk.low": "Risk: low",
        "card.risk.high": "Risk: HIGH",
        "card.timeout": "Answer within {seconds} s or it is refused.",
        "risk.submit": "submits a form",
        "risk.destructive": "deletes or removes something",
        "risk.payment": "pays or transfers money",
        "risk.sensitive": "touches a sensitive field",
        "risk.cross_origin_form": "sends the form to another site ({origin})",
        "log.ok": "done",
        "log.no_effect": "done, nothing changed",
        "log.pending": "running",
        "chat.not_connected": "Not connected to the server; the message was not sent.",
        "chat.not_configured": "No model is configured on the server, so the assistant cannot "
        "answer here. An agent can still use the page tools through the "
        "API.",
        "chat.tool_started": "Using {tool}",
        "chat.tool_finished": "{tool}: {outcome}",
        "notice.takeover": "You used the page, so the assistant paused. Press Resume to let it "
        "continue.",
        "notice.stopped": "Stopped. The assistant cannot act until you press Resume or send a "
        "message.",
        "notice.revoked": "Authorization revoked.",
        "notice.level": "Authorization level: {level}.",
        "notice.task_ended": "The task ended; authorization is back to asking each time.",
        "notice.task_continued": "The task continues on this page: its own action opened it.",
        "log.navigated": "opened the next page",
        "notice.back_forward": "You went back or forward, so the assistant's task ended.",
        "notice.denied": "Not allowed: {reason}",
        "notice.conversation_new": "New conversation.",
        "notice.conversation_deleted": "Your conversation was deleted.",
        "chat.history_restored": "Earlier in this conversation.",
        "chat.stopped_note": "Stopped by you.",
        "question.title": "The assistant asks you",
        "question.timeout": "It waits {seconds} s for your answer.",
        "question.timed_out": "The question went unanswered; the assistant was told.",
    },
    ZH: {
        "status.starting": "启动中",
        "status.idle": "空闲",
        "status.running": "运行中",
        "status.waiting": "等待你确认",
        "status.paused": "已暂停",
        "status.stopped": "已停止",
        "status.connecting": "连接中",
        "status.refused": "服务器拒绝连接",
        "level.per_action": "每次确认",
        "level.task": "本次任务",
        "level.full": "完全授权",
        "action.scroll": "滚动",
        "action.focus": "聚焦",
        "action.hover": "悬停",
        "action.drag": "拖动",
        "action.fill": "填写",
        "action.select": "选择",
        "action.check": "勾选",
        "action.uncheck": "取消勾选",
        "action.click": "点击",
        "action.keyboard": "按键",
        "action.wait": "等待",
        "action.observe": "观察",
        "action.screenshot_unmasked": "发送未遮罩敏感字段的截图",
        "action.snapshot_unmasked": "发送敏感字段的值（密码、银行卡信息、验证码）",
        "card.title": "助手请求在此页面上操作",
        "card.target.page": "页面",
        "card.target.site_tool": "网站工具\u201c{name}\u201d",
        "action.site_tool": "运行本网站的工具",
        "card.value": "值",
        "card.risk.low": "风险：低",
        "card.risk.high": "风险：高",
        "card.timeout": "请在 {seconds} 秒内确认，否则视为拒绝。",
        "risk.submit": "会提交表单",
        "risk.destructive": "会删除或移除内容",
        "risk.payment": "涉及支付或转账",
        "risk.sensitive": "涉及敏感字段",
        "risk.cross_origin_form": "会把表单发送到其他站点（{origin}）",
        "log.ok": "完成",
        "log.no_effect": "完成，页面无变化",
        "log.pending": "进行中",
        "chat.not_connected": "未连接到服务器，消息未发送。",
        "chat.not_configured": (
            "服务器未配置模型，助手无法在此回复。Agent 仍可通过 API 使用页面工具。"
        ),
        "chat.tool_started": "正在使用 {tool}",
        "chat.tool_finished": "{tool}：{outcome}",
        "notice.takeover": "你操作了页面，助手已暂停。点击“继续”让它继续。",
        "notice.stopped": "已停止。在你点击“继续”或发送消息之前，助手不能操作页面。",
        "notice.revoked": "授权已撤销。",
        "notice.level": "授权级别：{level}。",
        "notice.task_ended": "任务已结束，授权恢复为每次确认。",
        "notice.task_continued": "任务在此页面继续：是它自己的操作打开了这个页面。",
        "log.navigated": "打开了下一个页面",
        "notice.back_forward": "你后退或前进了页面，助手的任务已结束。",
        "notice.denied": "不允许：{reason}",
        "notice.conversation_new": "新对话。",
        "notice.conversation_deleted": "你的对话已删除。",
        "chat.history_restored": "以上是此前的对话。",
        "chat.stopped_note": "已被你停止。",
        "question.title": "助手向你提问",
        "question.timeout": "助手会等待你回答 {seconds} 秒。",
        "question.timed_out": "问题未被回答，已告知助手。",
    },
}


def normalize_locale(value: str) -> str:
    """``zh``, ``zh-CN``, ``zh-Hans`` ... -> ``zh-CN``; everything else -> ``en``."""
    return ZH if value.strip().lower().startswith("zh") else EN


def text(locale: str, key: str, **values: object) -> str:
    template = _TEXTS.get(locale, _TEXTS[EN]).get(key) or _TEXTS[EN][key]
    return template.format(**values) if values else template


def keys(locale: str) -> frozenset[str]:
    return frozenset(_TEXTS[locale])
