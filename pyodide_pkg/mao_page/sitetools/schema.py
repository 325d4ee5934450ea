"""Checking a site tool's arguments against its ``inputSchema`` before the page sees them.

A subset of JSON Schema (2020-12 validation vocabulary), written here rather than taken from
the ``jsonschema`` package: that package, in Pyodide, brings ``attrs``, ``referencing``,
``jsonschema-specifications`` and the compiled ``rpds-py``, megabytes loaded at boot and
held in the memory snapshot for tools most pages do not have; and the schemas tools declare
are the small common subset the model APIs accept (what a form synthesizes, what an LLM
function call takes). Pure logic, runs on CPython in tests.

Checked: ``type`` (one or a list), ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties`` (false or a schema), ``items``, ``minItems``, ``maxItems``,
``uniqueItems``, ``minLength``, ``maxLength``, ``pattern`` (Python ``re``, the common subset of
ECMAScript syntax), ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``,
``multipleOf``, ``anyOf``, ``oneOf``, ``allOf``, ``not``. Other keywords (``$ref``, ``format``,
``if``/``then``, ...) are not checked: the tool's own code sees those arguments as sent.

Messages name the place and the rule, never the value: an argument may be a password.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_ERRORS = 5
_MAX_DEPTH = 32


class SchemaProblems(ValueError):
    """The arguments do not satisfy the schema; ``problems`` are short readable lines."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def validate(arguments: Any, schema: Any) -> None:
    """Raise ``SchemaProblems`` unless ``arguments`` satisfy ``schema``."""
    problems: list[str] = []
    _check(arguments, schema, "arguments", problems, 0)
    if problems:
        raise SchemaProblems(problems[:MAX_ERRORS])


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _has_type(value: Any, wanted: str) -> bool:
    actual = _type_of(value)
    return actual == wanted or (wanted == "number" and actual == "integer")


def _same(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0, but True is not 1.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) if (
        isinstance(a, bool) or isinstance(b, bool)
    ) else a == b


def _check(value: Any, schema: Any, where: str, problems: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH or len(problems) >= MAX_ERRORS:
        return
    if schema is True or schema is None or not isinstance(schema, dict):
        if schema is False:
            problems.append(f"{where}: not allowed")
        return
    wanted = schema.get("type")
    if isinstance(wanted, str):
        wanted = [wanted]
    if isinstance(wanted, list) and wanted and not any(_has_type(value, t) for t in wanted):
        problems.append(f"{where}: must be {' or '.join(map(str, wanted))}, not {_type_of(value)}")
        return
    if "enum" in schema and isinstance(schema["enum"], list):
        if not any(_same(value, option) for option in schema["enum"]):
            shown = ", ".join(json.dumps(o, ensure_ascii=False) for o in schema["enum"][:10])
            problems.append(f"{where}: must be one of {shown}")
    if "const" in schema and not _same(value, schema["const"]):
        problems.append(f"{where}: must be {json.dumps(schema['const'], ensure_ascii=False)}")
    if isinstance(value, str):
        _check_string(value, schema, where, problems)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, schema, where, problems)
    elif isinstance(value, list):
        _check_array(value, schema, where, problems, depth)
    elif isinstance(value, dict):
        _check_object(value, schema, where, problems, depth)
    for part in schema.get("allOf") or []:
        _check(value, part, where, problems, depth + 1)
    for key, exactly_one in (("anyOf", False), ("oneOf", True)):
        options = schema.get(key)
        if isinstance(options, list) and options:
            passing = sum(1 for option in options if _passes(value, option, depth))
            if passing == 0 or (exactly_one and passing > 1):
                rule = "exactly one" if exactly_one else "at least one"
                problems.append(f"{where}: must match {rule} of the {len(options)} {key} schemas")
    if "not" in schema and _passes(value, schema["not"], depth):
        problems.append(f"{where}: must not match the 'not' schema")


def _passes(value: Any, schema: Any, depth: int) -> bool:
    inner: list[str] = []
    _check(value, schema, "", inner, depth + 1)
    return not inner


def _check_string(value: str, schema: dict[str, Any], where: str, problems: list[str]) -> None:
    # Lengths in code points, as JSON Schema counts them.
    length = len(value)
    if isinstance(schema.get("minLength"), int) and length < schema["minLength"]:
        problems.append(f"{where}: must be at least {schema['minLength']} characters")
    if isinstance(schema.get("maxLength"), int) and length > schema["maxLength"]:
        problems.append(f"{where}: must be at most {schema['maxLength']} characters")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            return  # an ECMAScript-only pattern: the tool checks it itself
        if not matched:
            problems.append(f"{where}: must match the pattern {pattern}")


def _check_number(value: float, schema: dict[str, Any], where: str, problems: list[str]) -> None:
    bounds = (
        ("minimum", lambda v, b: v >= b, "at least"),
        ("maximum", lambda v, b: v <= b, "at most"),
        ("exclusiveMinimum", lambda v, b: v > b, "more than"),
        ("exclusiveMaximum", lambda v, b: v < b, "less than"),
    )
    for key, holds, words in bounds:
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            if not holds(value, bound):
                problems.append(f"{where}: must be {words} {bound}")
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        quotient = value / step
        if abs(quotient - round(quotient)) > 1e-9:
            problems.append(f"{where}: must be a multiple of {step}")


def _check_array(
    value: list[Any], schema: dict[str, Any], where: str, problems: list[str], depth: int
) -> None:
    if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
        problems.append(f"{where}: must have at least {schema['minItems']} items")
    if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
        problems.append(f"{where}: must have at most {schema['maxItems']} items")
    if schema.get("uniqueItems") is True:
        seen = [json.dumps(item, sort_keys=True) for item in value]
        if len(set(seen)) != len(seen):
            problems.append(f"{where}: items must be unique")
    items = schema.get("items")
    if isinstance(items, (dict, bool)):
        for index, item in enumerate(value):
            _check(item, items, f"{where}[{index}]", problems, depth + 1)


def _check_object(
    value: dict[str, Any], schema: dict[str, Any], where: str, problems: list[str], depth: int
) -> None:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    for name in required:
        if isinstance(name, str) and name not in value:
            problems.append(f"{where}.{name}: is required")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        place = f"{where}.{name}"
        if name in properties:
            _check(item, properties[name], place, problems, depth + 1)
        elif extra is False:
            problems.append(f"{place}: is not a parameter of this tool")
        elif isinstance(extra, dict):
            _check(item, extra, place, problems, depth + 1)
