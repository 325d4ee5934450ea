"""Key names, codes and combos for ``page_keyboard`` (SPEC A1): ``Enter``, ``Control+a``, text.

Pure data and parsing; actions/keyboard.py dispatches the events and emulates default actions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolFailure
from ..protocol import ErrorCode

# key -> (code, keyCode), per UI Events KeyboardEvent key/code values.
NAMED_KEYS: dict[str, tuple[str, int]] = {
    "Enter": ("Enter", 13), "Tab": ("Tab", 9), "Escape": ("Escape", 27),
    "Backspace": ("Backspace", 8), "Delete": ("Delete", 46), " ": ("Space", 32),
    "ArrowUp": ("ArrowUp", 38), "ArrowDown": ("ArrowDown", 40), "ArrowLeft": ("ArrowLeft", 37),
    "ArrowRight": ("ArrowRight", 39), "Home": ("Home", 36), "End": ("End", 35),
    "PageUp": ("PageUp", 33), "PageDown": ("PageDown", 34), "Insert": ("Insert", 45),
    **{f"F{n}": (f"F{n}", 111 + n) for n in range(1, 13)},
}
ALIASES = {"Esc": "Escape", "Space": " ", "Spacebar": " ", "Up": "ArrowUp", "Down": "ArrowDown",
           "Left": "ArrowLeft", "Right": "ArrowRight", "Return": "Enter", "Del": "Delete"}
MODIFIERS: dict[str, tuple[str, str, int]] = {
    # name -> (key, code, keyCode)
    "Control": ("Control", "ControlLeft", 17), "Shift": ("Shift", "ShiftLeft", 16),
    "Alt": ("Alt", "AltLeft", 18), "Meta": ("Meta", "MetaLeft", 91),
}
MODIFIER_ALIASES = {"Ctrl": "Control", "Cmd": "Meta", "Command": "Meta", "Option": "Alt"}
_SHIFTED_DIGITS = {
    ")": "0",
    "!": "1",
    "@": "2",
    "#": "3",
    "$": "4",
    "%": "5",
    "^": "6",
    "&": "7",
    "*": "8",
    "(": "9",
}
_PUNCTUATION_CODES = {
    "-": "Minus", "=": "Equal", "[": "BracketLeft", "]": "BracketRight", "\\": "Backslash",
    ";": "Semicolon", "'": "Quote", ",": "Comma", ".": "Period", "/": "Slash", "`": "Backquote",
}


@dataclass(frozen=True, slots=True)
class KeyPress:
    key: str
    code: str
    key_code: int
    modifiers: frozenset[str] = field(default_factory=frozenset)

    @property
    def shift(self) -> bool:
        return "Shift" in self.modifiers

    @property
    def has_command_modifier(self) -> bool:
        return bool(self.modifiers & {"Control", "Meta", "Alt"})

    @property
    def is_printable(self) -> bool:
        return len(self.key) == 1 and not self.has_command_modifier

    @property
    def is_select_all(self) -> bool:
        return self.key.lower() == "a" and bool(self.modifiers & {"Control", "Meta"})

    @property
    def produces_keypress(self) -> bool:
        # keypress fires for character keys and Enter, not for modified shortcuts.
        return (self.is_printable or self.key == "Enter") and not self.has_command_modifier

    @property
    def char_code(self) -> int:
        return 13 if self.key == "Enter" else ord(self.key) if len(self.key) == 1 else 0

    def event_init(self) -> dict[str, Any]:
        return {
            "key": self.key, "code": self.code, "keyCode": self.key_code, "which": self.key_code,
            "ctrlKey": "Control" in self.modifiers, "shiftKey": self.shift,
            "altKey": "Alt" in self.modifiers, "metaKey": "Meta" in self.modifiers,
        }

    def modifier_presses(self) -> list[dict[str, Any]]:
        presses = []
        for name in ("Control", "Alt", "Meta", "Shift"):
            if name in self.modifiers:
                key, code, key_code = MODIFIERS[name]
                presses.append(
                    {
                        "key": key,
                        "code": code,
                        "keyCode": key_code,
                        "which": key_code,
                        "ctrlKey": "Control" in self.modifiers,
                        "shiftKey": self.shift,
                        "altKey": "Alt" in self.modifiers,
                        "metaKey": "Meta" in self.modifiers,
                    }
                )
        return presses


def _char_press(char: str, modifiers: frozenset[str] = frozenset()) -> KeyPress:
    if char.isalpha() and char.isascii():
        code, key_code = f"Key{char.upper()}", ord(char.upper())
        if "Shift" in modifiers:
            char = char.upper()
    elif char.isdigit():
        code, key_code = f"Digit{char}", ord(char)
    elif char in _SHIFTED_DIGITS:
        code, key_code = f"Digit{_SHIFTED_DIGITS[char]}", ord(_SHIFTED_DIGITS[char])
    elif char in NAMED_KEYS:
        code, key_code = NAMED_KEYS[char]
    elif char == "\n":
        return KeyPress("Enter", "Enter", 13, modifiers)
    else:
        code, key_code = _PUNCTUATION_CODES.get(char, ""), 0
    return KeyPress(char, code, key_code, modifiers)


def parse_key(spec: str) -> KeyPress:
    """``Enter``, ``a``, ``Control+a``, ``Shift+Tab``. Unknown names are refused."""
    parts = spec.split("+") if spec != "+" else ["+"]
    if spec.endswith("++"):
        parts = [*spec[:-2].split("+"), "+"]
    *mods, name = [p.strip() if p.strip() else p for p in parts]
    modifiers = set()
    for mod in mods:
        canonical = MODIFIER_ALIASES.get(mod, mod)
        if canonical not in MODIFIERS:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST,
                f"unknown modifier {mod!r} in {spec!r}; use Control, Shift, Alt or Meta",
            )
        modifiers.add(canonical)
    name = ALIASES.get(name, name)
    frozen = frozenset(modifiers)
    if name in NAMED_KEYS:
        code, key_code = NAMED_KEYS[name]
        return KeyPress(name, code, key_code, frozen)
    if name in MODIFIERS:
        key, code, key_code = MODIFIERS[name]
        return KeyPress(key, code, key_code, frozen)
    if len(name) == 1:
        return _char_press(name, frozen)
    raise ToolFailure(
        ErrorCode.INVALID_REQUEST,
        f"unknown key {name!r}; use a character or a key name like Enter, Tab, Escape, ArrowDown, "
        f"Backspace",
    )


def text_keys(text: str) -> list[KeyPress]:
    """One key press per character of ``text``; capitals carry Shift like a real keyboard."""
    return [_char_press(c, frozenset({"Shift"}) if c.isupper() else frozenset()) for c in text]
