"""The schemas ``tools/list`` publishes, compacted: every conversation pays for them before its first
question (with 30 tools they were 115 KB, about 30k tokens; tests/test_mcp_surface.py holds them to 40 KB),
so they carry what a caller needs and nothing pydantic adds by habit.

- Input schemas keep everything that constrains or explains an argument (types, enums, bounds,
  defaults, descriptions) and drop the generated ``title`` of every field; ``X | None`` becomes
  ``"type": [X, "null"]``.
- Output schemas name every top-level field of the result with its JSON type, its enum values and its
  description; a nested record is typed ``object`` (its fields are in the result itself, named for a
  reader). The result is still validated server-side against the full pydantic model before it is
  sent, and it matches the published schema, which accepts a superset.

Pure functions over JSON schemas; ``server.GsolveServer.list_tools`` applies them once per tool.
"""

from __future__ import annotations

from typing import Any

_NULL = {"type": "null"}


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` replaced by its definition (sibling keys win)."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    target = defs.get(ref.removeprefix("#/$defs/"), {})
    return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}


def _types(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    """The JSON types ``schema`` admits, [] for any."""
    schema = _resolve(schema, defs)
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    found: list[str] = []
    for alt in schema.get("anyOf", schema.get("oneOf", [])):
        sub = _types(alt, defs)
        if not sub:
            return []  # one alternative admits anything: so does the whole
        found += [x for x in sub if x not in found]
    if "enum" in schema and not found:
        kinds = {type(v) for v in schema["enum"]}
        found = ["string"] if kinds <= {str} else []
    return found


def _enum(schema: dict[str, Any], defs: dict[str, Any]) -> list[Any] | None:
    """The allowed values when ``schema`` is an enum or an optional enum (None admitted as null)."""
    schema = _resolve(schema, defs)
    if "enum" in schema:
        return list(schema["enum"])
    alts = [_resolve(a, defs) for a in schema.get("anyOf", [])]
    enums = [a for a in alts if "enum" in a]
    if len(enums) == 1 and all(a == _NULL or a is enums[0] for a in alts):
        return [*enums[0]["enum"], *([None] if _NULL in alts else [])]
    return None


def _field(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """One top-level output field: its types, enum, description; arrays say their items' types."""
    resolved = _resolve(schema, defs)
    out: dict[str, Any] = {}
    types = _types(resolved, defs)
    if types:
        out["type"] = types[0] if len(types) == 1 else types
    values = _enum(resolved, defs)
    if values is not None:
        out["enum"] = values
    if "array" in types:
        arrays = [a for a in (resolved, *(_resolve(x, defs) for x in resolved.get("anyOf", []))) if "items" in a]
        item_types = _types(arrays[0]["items"], defs) if arrays else []
        if item_types:
            out["items"] = {"type": item_types[0] if len(item_types) == 1 else item_types}
    if isinstance(schema.get("description"), str):
        out["description"] = schema["description"]
    return out


def compact_output(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The published output schema: the result's top-level fields, typed and described (module doc)."""
    if schema is None:
        return None
    defs = schema.get("$defs", {})
    root = _resolve(schema, defs)
    out: dict[str, Any] = {"type": "object",
                           "properties": {k: _field(v, defs) for k, v in root.get("properties", {}).items()}}
    if root.get("required"):
        out["required"] = list(root["required"])
    return out


def _collapse_optional(schema: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, {"type": "null"}]}`` with X a plain typed schema -> X with ``"type": [t, "null"]``."""
    alts = schema.get("anyOf")
    if not isinstance(alts, list) or len(alts) != 2 or _NULL not in alts:
        return schema
    (other,) = [a for a in alts if a != _NULL]
    if not isinstance(other.get("type"), str) or "$ref" in other or "anyOf" in other:
        return schema
    merged = {**other, **{k: v for k, v in schema.items() if k != "anyOf"}, "type": [other["type"], "null"]}
    if "enum" in merged:
        merged["enum"] = [*merged["enum"], None]
    return merged


def compact_input(schema: Any) -> Any:
    """The published input schema: the same constraints without generated titles (module doc)."""
    if isinstance(schema, list):
        return [compact_input(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact_input(sub) for name, sub in value.items()}  # names, not keywords
        elif key == "$defs" and isinstance(value, dict):
            # A definition's description is its class docstring, written for the code's reader.
            out[key] = {name: {k: v for k, v in compact_input(sub).items() if k != "description"}
                        for name, sub in value.items()}
        else:
            out[key] = compact_input(value)
    return _collapse_optional(out)
