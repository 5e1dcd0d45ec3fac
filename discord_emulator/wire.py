"""JSON on the wire: encoding, decoding and copying parsed JSON, by orjson."""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["copy_json", "decode_json", "encode_json"]


def encode_json(value: Any) -> str:
    """``json.dumps(value)`` as compact text, by orjson: the stdlib's encoder and decoder
    were a sixth of the emulator's CPU under bench/load.py. Dict keys may be non-strings,
    as with ``json``."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def decode_json(raw: str | bytes | bytearray) -> Any:
    """``json.loads(raw)``, by orjson; ValueError (``orjson.JSONDecodeError``) if invalid."""
    return orjson.loads(raw)


def copy_json(value: Any) -> Any:
    """A deep copy of parsed JSON (dicts, lists and scalars): ``copy.deepcopy`` without
    its memo and dispatch, which was a twentieth of the emulator's time under load."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value
