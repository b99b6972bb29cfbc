"""The MCP surface an assistant loads before its first question (issue 24 item 4): `tools/list` through
the real client stays within 20 tools and 40 KB, each tool says when to use it in one or two sentences,
and the compacted schemas still describe what the server accepts and returns."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
from mcp import Client

from mcp_server.schemas import compact_input, compact_output
from mcp_server.server import create_server

MAX_TOOLS = 20
MAX_LIST_BYTES = 40_000  # ~10k tokens; it was 120 KB (30 tools) before the merges of 2026-11-27
MAX_DESCRIPTION_CHARS = 400


@pytest.mark.anyio
async def test_tools_list_fits_the_budget(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path)) as client:
        listed = await client.list_tools()
    size = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    names = [t.name for t in listed.tools]
    print(f"tools/list: {len(names)} tools, {size:,} bytes")
    assert len(names) <= MAX_TOOLS, names
    assert size <= MAX_LIST_BYTES, size
    for t in listed.tools:
        desc = t.description or ""
        sentences = len(re.findall(r"[.!?](?:\s|$)", desc))
        assert 40 < len(desc) <= MAX_DESCRIPTION_CHARS and sentences <= 2, (t.name, len(desc), sentences)
        assert desc.startswith(("Use ", "Call ")), f"{t.name}: say when to use it first"
        assert t.annotations is not None and t.annotations.read_only_hint is not None, t.name
        assert t.output_schema is not None and t.output_schema["type"] == "object", t.name
        assert '"title"' not in str(t.input_schema).replace("'", '"'), t.name


def test_compact_input_keeps_every_constraint() -> None:
    """An optional bounded string and an optional enum: the compact schema accepts and refuses what
    the full one does."""
    full = {
        "type": "object",
        "$defs": {"Algo": {"description": "internal docstring", "enum": ["ppo", "dqn"], "title": "Algo",
                           "type": "string"}},
        "properties": {
            "name": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}], "default": None,
                     "title": "Name", "description": "kept"},
            "algo": {"anyOf": [{"$ref": "#/$defs/Algo"}, {"type": "null"}], "default": None, "title": "Algo"},
            "kind": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}], "title": "Kind"},
            "title": {"type": "integer", "minimum": 1, "title": "Title"},  # a parameter called title stays
        },
        "required": ["title"],
    }
    small = compact_input(full)
    assert small["properties"]["name"] == {"type": ["string", "null"], "maxLength": 3, "default": None,
                                           "description": "kept"}
    assert small["properties"]["kind"]["enum"] == ["a", "b", None]
    assert "title" in small["properties"] and "description" not in small["$defs"]["Algo"]
    samples = [{"title": 1}, {"title": 0}, {"title": 1, "name": None}, {"title": 1, "name": "abcd"},
               {"title": 1, "algo": "ppo"}, {"title": 1, "algo": "sac"}, {"title": 1, "algo": None},
               {"title": 1, "kind": None}, {"title": 1, "kind": "c"}, {}]
    for sample in samples:
        assert jsonschema.Draft202012Validator(full).is_valid(sample) == \
            jsonschema.Draft202012Validator(small).is_valid(sample), sample


def test_compact_output_names_each_field_with_its_type() -> None:
    full = {
        "$defs": {"Status": {"enum": ["running", "done"], "type": "string"},
                  "Inner": {"properties": {"x": {"type": "integer"}}, "required": ["x"], "type": "object"}},
        "properties": {
            "status": {"$ref": "#/$defs/Status"},
            "inner": {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}], "description": "nested"},
            "items": {"items": {"$ref": "#/$defs/Inner"}, "type": "array", "title": "Items"},
            "tags": {"items": {"type": "string"}, "type": "array"},
            "anything": {"title": "Anything"},
        },
        "required": ["status"],
        "type": "object",
    }
    small = compact_output(full)
    assert small == {"type": "object", "required": ["status"], "properties": {
        "status": {"type": "string", "enum": ["running", "done"]},
        "inner": {"type": ["object", "null"], "description": "nested"},
        "items": {"type": "array", "items": {"type": "object"}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "anything": {},
    }}
    result = {"status": "done", "inner": {"x": 1}, "items": [{"x": 2}], "tags": ["a"], "anything": [1]}
    assert jsonschema.Draft202012Validator(full).is_valid(result)
    assert jsonschema.Draft202012Validator(small).is_valid(result)
    assert not jsonschema.Draft202012Validator(small).is_valid({"status": "exploded"})
