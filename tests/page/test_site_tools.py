"""Site tools in the page, on CPython (SPEC B8, P1-P4): the argument check against a tool's
``inputSchema``, the risk of a tool from what the page says it does, the authorization
center's decision and card, and the runner's outcomes, against a fake registry."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mao_page.errors import ToolFailure
from mao_page.protocol import ErrorCode, PageToolRequest, build_request
from mao_page.sitetools.runner import SiteToolRunner, SiteToolView
from mao_page.sitetools.schema import SchemaProblems, validate
from mao_page.supervision.authorization import HostPolicy, Level
from mao_page.supervision.risk import RiskReason, classify_site_tool

from .test_authorization import answer_first_card, decision, make_supervisor

CART = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z][0-9]+$", "description": "Item"},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 9},
        "size": {"enum": ["S", "M", "L"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2,
                 "uniqueItems": True},
        "password": {"type": "string"},
    },
    "required": ["sku"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("arguments", [
    {"sku": "A1"},
    {"sku": "B22", "quantity": 3, "size": "M", "tags": ["gift"]},
    {"sku": "A1", "quantity": 2.0},  # JSON has one number type: 2.0 is an integer
])
def test_arguments_that_fit_the_schema_pass(arguments: dict[str, Any]) -> None:
    validate(arguments, CART)


@pytest.mark.parametrize(("arguments", "problem"), [
    ({}, "arguments.sku: is required"),
    ({"sku": "a1"}, "arguments.sku: must match the pattern"),
    ({"sku": "A1", "quantity": 0}, "arguments.quantity: must be at least 1"),
    ({"sku": "A1", "quantity": 1.5}, "arguments.quantity: must be integer"),
    ({"sku": "A1", "quantity": True}, "arguments.quantity: must be integer, not boolean"),
    ({"sku": "A1", "size": "XL"}, "arguments.size: must be one of"),
    ({"sku": "A1", "tags": ["a", "a"]}, "arguments.tags: items must be unique"),
    ({"sku": "A1", "tags": [1]}, "arguments.tags[0]: must be string"),
    ({"sku": "A1", "coupon": "FREE"}, "arguments.coupon: is not a parameter of this tool"),
])
def test_arguments_outside_the_schema_are_refused_with_the_place_and_rule(
    arguments: dict[str, Any], problem: str
) -> None:
    with pytest.raises(SchemaProblems) as refused:
        validate(arguments, CART)
    assert problem in str(refused.value)


def test_a_refusal_never_quotes_the_value() -> None:  # an argument may be a password
    with pytest.raises(SchemaProblems) as refused:
        validate({"sku": "hunter2-secret"}, CART)
    assert "hunter2" not in str(refused.value)


def test_keywords_outside_the_subset_are_left_to_the_tool() -> None:
    validate({"when": "not a date"}, {"properties": {"when": {"format": "date"}}})
    validate({"x": 1}, {"$ref": "#/definitions/nowhere"})


def test_any_of_and_one_of_count_matches() -> None:
    either = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    validate("a", either)
    with pytest.raises(SchemaProblems):
        validate(1.5, either)
    with pytest.raises(SchemaProblems, match="exactly one"):
        validate(3, {"oneOf": [{"type": "integer"}, {"type": "number"}]})


@pytest.mark.parametrize(("name", "description", "reasons"), [
    ("order_status", "Look up an order", ()),
    ("deleteAccount", "Removes the account", (RiskReason.DESTRUCTIVE,)),
    ("checkout", "Pay for the cart", (RiskReason.PAYMENT,)),
    ("send_message", "Send a message to support", (RiskReason.SUBMIT,)),
])
def test_a_tools_risk_is_read_from_its_name_and_description(
    name: str, description: str, reasons: tuple[RiskReason, ...]
) -> None:  # SPEC P4
    risk = classify_site_tool(name, description, page_origin="https://shop.example")
    assert set(risk.reasons) == set(reasons)


def test_an_autosubmit_form_posting_elsewhere_is_a_cross_origin_submission() -> None:
    risk = classify_site_tool(
        "search", "Search", page_origin="https://shop.example", autosubmit=True,
        form_action="https://other.example/search",
    )
    assert risk.reasons == (RiskReason.SUBMIT, RiskReason.CROSS_ORIGIN_FORM)


def request(name: str = "add_to_cart", arguments: dict[str, Any] | None = None,
            timeout_ms: int = 30_000) -> PageToolRequest:
    return build_request("site_tool", {"name": name, "arguments": arguments or {"sku": "A1"}},
                         request_id="r1", session_id="s1", timeout_ms=timeout_ms)


WRITING = SiteToolView("add_to_cart", "Add an item", False, "script", CART)
READING = SiteToolView("order_status", "Look up an order", True, "script", {})


def authorize(tool: SiteToolView, arguments: dict[str, Any], *, policy: HostPolicy | None = None,
              answer: str | None = None) -> tuple[ToolFailure | None, Any, list]:
    async def scenario() -> tuple[ToolFailure | None, Any, list]:
        supervisor, ui, audit = make_supervisor(policy)
        supervisor.begin_request(request(tool.name, arguments))
        helper = (
            asyncio.ensure_future(answer_first_card(supervisor, ui, decision(answer)))
            if answer else None
        )
        try:
            await asyncio.wait_for(supervisor.authorize_site_tool(tool, arguments), 2)
            failure = None
        except ToolFailure as error:
            failure = error
        if helper:
            await helper
        return failure, ui, audit

    return asyncio.run(scenario())


def test_a_read_only_tool_runs_without_a_card_under_per_action() -> None:  # SPEC P1
    failure, ui, _ = authorize(READING, {})
    assert failure is None and ui.cards == []


def test_a_writing_tools_card_names_it_and_masks_sensitive_arguments() -> None:  # SPEC P1, P5
    failure, ui, audit = authorize(
        WRITING, {"sku": "A1", "password": "hunter2"}, answer="once"
    )
    assert failure is None
    (shown,) = ui.cards
    assert "add_to_cart" in shown["target"]
    assert '"sku": "A1"' in shown["value"] and "hunter2" not in shown["value"]
    assert all("hunter2" not in repr(event) for event in audit)


def test_a_denied_tool_is_user_rejected() -> None:
    failure, _, _ = authorize(WRITING, {"sku": "A1"}, answer="deny")
    assert failure is not None and failure.code is ErrorCode.USER_REJECTED


def test_a_scope_without_site_tools_refuses_even_read_only_ones() -> None:  # SPEC P2
    policy = HostPolicy(actions=frozenset({"click", "observe"}), level=Level.FULL)
    failure, _, _ = authorize(READING, {}, policy=policy)
    assert failure is not None and failure.code is ErrorCode.PERMISSION_DENIED


class FakeRegistry:
    """The loader's registry as the runner sees it."""

    def __init__(self, outcome: dict[str, Any] | None = None, *, hang: bool = False) -> None:
        self.outcome = outcome or {"status": "ok", "json": '{"cart": 1}'}
        self.hang = hang
        self.ran: list[str] = []
        self.cancelled: list[str] = []

    def describe(self, name: str) -> dict[str, Any] | None:
        if name != "add_to_cart":
            return None
        return {"name": name, "description": "Add", "inputSchema": CART, "readOnly": False,
                "source": "script"}

    async def run(self, call_id: str, name: str, arguments_json: str, timeout_ms: int
                  ) -> dict[str, Any]:
        self.ran.append(arguments_json)
        if self.hang:
            await asyncio.sleep(10)
        return self.outcome

    def cancel(self, call_id: str) -> None:
        self.cancelled.append(call_id)


def run(registry: FakeRegistry, req: PageToolRequest) -> Any:
    runner = SiteToolRunner(registry)

    async def go() -> Any:
        return await runner.run(req, asyncio.get_running_loop().time())

    return asyncio.run(go())


def test_the_runner_answers_the_tools_output() -> None:
    result = run(FakeRegistry(), request())
    assert result.success and result.result["output"] == {"cart": 1}


def test_bad_arguments_never_reach_the_registry() -> None:
    registry = FakeRegistry()
    with pytest.raises(ToolFailure) as refused:
        run(registry, request(arguments={"sku": "lower"}))
    assert refused.value.code is ErrorCode.INVALID_REQUEST and registry.ran == []


@pytest.mark.parametrize(("status", "code"), [
    ("error", ErrorCode.SITE_TOOL_FAILED), ("not_found", ErrorCode.NOT_FOUND),
    ("timeout", ErrorCode.TIMEOUT),
])
def test_the_registrys_outcomes_become_stable_codes(status: str, code: ErrorCode) -> None:
    with pytest.raises(ToolFailure) as failed:
        run(FakeRegistry({"status": status, "message": "boom", "name": "Error"}), request())
    assert failed.value.code is code


def test_an_unknown_tool_is_not_found() -> None:
    with pytest.raises(ToolFailure) as failed:
        run(FakeRegistry(), request(name="nope"))
    assert failed.value.code is ErrorCode.NOT_FOUND


def test_a_cancelled_call_is_abandoned_in_the_page() -> None:
    registry = FakeRegistry(hang=True)
    runner = SiteToolRunner(registry)

    async def go() -> None:
        task = asyncio.ensure_future(runner.run(request(), asyncio.get_running_loop().time()))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert registry.cancelled == ["r1"]
