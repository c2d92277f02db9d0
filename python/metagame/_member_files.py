"""What ``metagame.torch`` and ``metagame.jax`` policies share to be kept in a run folder
as files of their own (safetensors, with how to rebuild them in the file's metadata),
without pickle: import paths of module-level functions and classes, and the metadata."""

from __future__ import annotations

import importlib
import json
from typing import Any, Optional

# The one metadata entry of a member file: a JSON object with sorted keys, so that the same
# member writes the same bytes (a member's file is named by their hash).
KEY = "metagame"


def import_path(obj: Any) -> Optional[str]:
    """``module:qualname`` of a module-level function or class, where importing it gives
    back the same object; else None."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    try:
        return path if resolve(path := f"{module}:{qualname}") is obj else None
    except (ImportError, AttributeError):
        return None


def resolve(path: str) -> Any:
    """The object a ``module:qualname`` path names."""
    module, _, qualname = path.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def metadata(recipe: dict) -> dict[str, str]:
    """A recipe as safetensors metadata."""
    return {KEY: json.dumps(recipe, sort_keys=True)}


def recipe(data: bytes) -> dict:
    """The recipe in a safetensors file's header (an 8-byte little-endian length, then
    JSON), which the loaders that take bytes do not return."""
    length = int.from_bytes(data[:8], "little")
    try:
        return json.loads(json.loads(data[8 : 8 + length])["__metadata__"][KEY])
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"not a member file metagame wrote (no `{KEY}` metadata: {e})") from None
