"""Resolving plain YAML scalars as PyYAML's safe loader does, and the YAML 1.1 traps: values
that YAML reads differently than people expect (``1e-3`` is text, ``on`` is true, ``010`` is 8)."""

from __future__ import annotations

import re

import yaml

from graphcore.language.located import LINE_BREAK, LScalar

# ---------------------------------------------------------------- scalar resolution and traps

CORE = "tag:yaml.org,2002:"
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_BUILDERS = {
    CORE + "str": lambda node: node.value,
    CORE + "int": _CONSTRUCTOR.construct_yaml_int,
    CORE + "float": _CONSTRUCTOR.construct_yaml_float,
    CORE + "bool": _CONSTRUCTOR.construct_yaml_bool,
    CORE + "null": lambda node: None,
}
# Each part matches one way only (no `[0-9_]*\.?[0-9_]*`, which backtracks quadratically on
# a long run of digits): a 200,000-digit scalar must not take minutes to refuse.
_EXPONENT = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+")
_LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+")
_LONG_INTEGER = re.compile(r"[-+]?[0-9][0-9_]*")  # text only when past Python's digit limit
MAX_INTEGER_DIGITS = 4300  # Python's default int-from-text limit (sys.get_int_max_str_digits)
_BOOL_WORDS = {"yes", "no", "on", "off", "y", "n"}
_FLOAT_WORDS = {"nan": ".nan", "inf": ".inf", "+inf": ".inf", "-inf": "-.inf",
                "infinity": ".inf", "+infinity": ".inf", "-infinity": "-.inf"}


def resolve(tag: str, text: str) -> int | float | bool | str | None:
    """The value SafeLoader gives ``text`` under ``tag``; tags we do not build stay text.

    Raises ValueError, KeyError or IndexError when an explicit tag does not fit the text
    (``!!int x``, ``!!bool maybe``, ``!!int ''``).
    """
    build = _BUILDERS.get(tag)
    return text if build is None else build(yaml.ScalarNode(tag, text))


def implicit_value(text: str, tag: str | None = None) -> int | float | bool | str | None:
    """The value SafeLoader gives a plain scalar; text where its constructor would fail."""
    if tag is None:
        tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    try:
        return resolve(tag, text)
    except (ValueError, KeyError, IndexError):  # "0b_", "0x_": the patterns allow them
        return text


def _exponent_fix(text: str) -> str:
    mantissa, exponent = re.split("[eE]", text)
    if "." not in mantissa:
        mantissa += ".0"
    elif mantissa.endswith("."):
        mantissa += "0"
    if exponent[0] not in "+-":
        exponent = "+" + exponent
    return f"{mantissa}e{exponent}"


def trap_hint(scalar: LScalar | str) -> str | None:
    """A hint when YAML 1.1 reads this plain scalar differently than people expect, else None.

    Takes an ``LScalar`` (returns its ``trap``, None unless plain and untagged) or the text of a
    plain scalar::

        trap_hint("1e-3")   # "YAML 1.1 reads 1e-3 as text, not a number; write 1.0e-3"
        trap_hint("off")    # "YAML 1.1 reads off as the boolean false; ..."
        trap_hint("0.001")  # None
    """
    if isinstance(scalar, LScalar):
        return scalar.trap
    text = scalar
    value = implicit_value(text)
    if isinstance(value, str):
        return _text_trap(text)
    if isinstance(value, bool):
        if text.lower() in _BOOL_WORDS:
            return (f"YAML 1.1 reads {text} as the boolean {str(value).lower()}; "
                    f"quote it ('{text}') if you meant text, or write {str(value).lower()}")
        return None
    if isinstance(value, int | float):
        return _number_trap(text, value)
    return None


def _text_trap(text: str) -> str | None:
    """Traps of plain scalars that resolved to text."""
    lowered = text.lower()
    digits = sum(c.isdigit() for c in text)
    if digits > MAX_INTEGER_DIGITS and _LONG_INTEGER.fullmatch(text):
        return (f"an integer of {digits:,} digits is too long to be read as a number (at most "
                f"{MAX_INTEGER_DIGITS:,} digits)")
    if _EXPONENT.fullmatch(text):
        return f"YAML 1.1 reads {text} as text, not a number; write {_exponent_fix(text)}"
    if lowered in _BOOL_WORDS:
        return (f"{text} is read as text here, but YAML 1.1 defines it as a boolean and other "
                f"tools read it so; quote it ('{text}'), or write true/false")
    if _LEADING_ZERO.fullmatch(text):
        return (f"{text} is read as text (a leading zero means octal in YAML 1.1, and it is "
                f"not a valid octal number); write {_without_zeros(text)} for the number")
    if lowered in _FLOAT_WORDS:
        return f"{text} is text in YAML; write {_FLOAT_WORDS[lowered]} for the number"
    return glued_key_hint(text)


def _number_trap(text: str, value: int | float) -> str | None:
    """Traps of plain scalars that resolved to numbers."""
    if _LEADING_ZERO.fullmatch(text) and isinstance(value, int):
        return (f"YAML 1.1 reads {text} as the octal number {value}; write "
                f"{_without_zeros(text)} for the decimal number, or quote it if you meant text")
    if re.fullmatch(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?", text):
        return (f"YAML 1.1 reads {text} as the base-60 number {value!r}; "
                f"quote it ('{text}') if you meant text")
    if "_" in text:
        return (f"YAML 1.1 reads {text} as {value!r}, ignoring '_', but YAML 1.2 reads it as "
                f"text; write {value!r}")
    return None


def _without_zeros(text: str) -> str:
    sign = text[0] if text[0] in "+-" else ""
    digits = text.lstrip("+-").replace("_", "").lstrip("0")
    return sign + (digits or "0")


def folded_hint(raw: str, value: str, line: int, before: str) -> str | None:
    """A hint when a plain scalar over several lines holds what look like list items: YAML
    folds ``- relu`` / ``    - tanh`` (the second item indented deeper) into the one text
    ``'relu - tanh'``. ``raw`` is the scalar's source text, starting on 1-based ``line`` after
    ``before`` (that line's text up to the scalar)::

        folded_hint("relu\\n    - tanh", "relu - tanh", 6, "  - ")
        # "this reads as one text 'relu - tanh' because '- tanh' on line 7 is indented more
        #  than '- relu' on line 6; put list items at the same indentation"
    """
    lines = LINE_BREAK.split(raw)
    folded = next(((number, text.strip()) for number, text in enumerate(lines[1:], line + 1)
                   if text.strip() == "-" or text.strip().startswith("- ")), None)
    if folded is None:
        return None
    number, item = folded
    above = (f"'- {lines[0].strip()}' on line {line}" if before.rstrip().endswith("-")
             else f"line {line}")
    return (f"this reads as one text {value!r} because '{item}' on line {number} is indented "
            f"more than {above}; put list items at the same indentation")


_GLUED_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):([^\s/\\].*)", re.DOTALL)


def glued_key_hint(text: str) -> str | None:
    """A hint when a plain scalar reads ``key:value`` with no space after the colon: YAML needs
    ``': '`` to see a key, so ``op:relu`` is one text."""
    glued = _GLUED_KEY.fullmatch(text)
    if glued is None:
        return None
    return (f"YAML reads {text!r} as one text: a key needs a space after its ':' "
            f"({glued.group(1)}: {glued.group(2)})")
