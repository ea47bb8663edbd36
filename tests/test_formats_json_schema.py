"""docs/report.schema.json (draft 2020-12) describes what `-o json` really writes, and nothing else."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import types
import typing

import jsonschema
import pytest
from formats_sample import sample_report

from imgcheck import api
from imgcheck.formats.report_formats import render
from imgcheck.model.report import REPORT_SCHEMA_VERSION, Report

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "..", "docs", "report.schema.json")


@pytest.fixture(scope="module")
def schema() -> dict:
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        doc = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(doc)
    return doc


def _validate(schema: dict, doc: dict) -> None:
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)


def test_sample_report_validates(schema):
    _validate(schema, json.loads(render(sample_report(), "json")))


@pytest.mark.e2e
def test_report_on_real_bookworm_facts_validates(schema, debian_archive):
    facts = api.inspect_image(f"docker-archive:{debian_archive('bookworm')}")
    assert facts.rdma.libibverbs.version == "1.14.44.0"  # really the bookworm image
    report = dataclasses.replace(sample_report(), image=facts)
    _validate(schema, json.loads(render(report, "json")))


def test_schema_rejects_what_the_contract_forbids(schema):
    doc = json.loads(render(sample_report(), "json"))
    bad = copy.deepcopy(doc)
    bad["findings"][0]["severity"] = "critical"
    with pytest.raises(jsonschema.ValidationError):
        _validate(schema, bad)
    bad = copy.deepcopy(doc)
    del bad["findings"][0]["predicted_error"]  # always present, null when unknown
    with pytest.raises(jsonschema.ValidationError):
        _validate(schema, bad)
    bad = copy.deepcopy(doc)
    bad["image"]["rdma"]["libibverbs"]["private_abi"] = "34"
    with pytest.raises(jsonschema.ValidationError):
        _validate(schema, bad)


# --- drift guard: every field of the dataclasses is in the schema, and every schema field is written ---

_ENUM_VALUES = {  # fields whose schema is an enum or pattern get a value the contract allows
    "severity": "error",
    "confidence": "verified",
    "flavor": "inbox",
    "stack": "mlnx_ofed",
    "kernel_module": "open",
    "verdict": "fail",
    "outcome": "fail",
    "kind": "node-upgrade",
    "db": "dpkg",
    "id": "RDMA-X",
    "schema_version": REPORT_SCHEMA_VERSION,  # the report's const (image and node facts accept any version >= 1)
}
_FIELD_VALUES = {("Location", "kind"): "path"}  # a field name whose enum differs by dataclass


def _filled(tp, name: str = ""):
    """A value of type ``tp`` with every optional part present, so no field hides behind a null."""
    if name in _ENUM_VALUES:
        return _ENUM_VALUES[name]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _filled(next(a for a in typing.get_args(tp) if a is not type(None)), name)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return tp(
            **{
                f.name: _FIELD_VALUES.get((tp.__name__, f.name)) or _filled(hints[f.name], f.name)
                for f in dataclasses.fields(tp)
            }
        )
    if origin is tuple:
        return (_filled(typing.get_args(tp)[0], name),)
    if origin is dict:
        return {"KEY": _filled(typing.get_args(tp)[1], name)}
    return {str: "text", int: 1, float: 1.5, bool: True}[tp]


def _strict(node):
    """Copy of the schema where objects may not carry properties it does not name."""
    if isinstance(node, dict):
        out = {k: _strict(v) for k, v in node.items()}
        if "properties" in node:
            out["unevaluatedProperties"] = False
        return out
    if isinstance(node, list):
        return [_strict(v) for v in node]
    return node


def test_schema_names_every_model_field(schema):
    report = _filled(Report)
    doc = json.loads(render(report, "json"))
    assert doc["image"]["cuda"]["compat_driver"] == "text"  # the generator really filled nested optionals
    _validate(_strict(schema), doc)  # fails naming any field the schema does not describe
