"""services/api/openapi.yaml stays true to the code."""

import json
from unittest import mock

import pytest
from openapi_spec_validator import validate

from services.api import microversion
from services.api import openapi
from services.api import routes

METHODS = ("get", "head", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def doc():
    return openapi.load()


def _routes():
    conf = mock.MagicMock()
    conf.api.max_limit = 1000
    found = {}
    for path, resource in routes.route_table(mock.MagicMock(), conf):
        found[path] = {m for m in METHODS if hasattr(resource, "on_" + m)}
    return found


def test_is_valid_openapi_3_1(doc):
    validate(doc)


def test_documents_exactly_the_routes(doc):
    documented = {path: {m for m in item if m in METHODS}
                  for path, item in doc["paths"].items()}
    assert documented == _routes()


def test_version_is_the_maximum_microversion(doc):
    assert doc["info"]["version"] == str(microversion.MAX_VERSION)


def test_request_bodies_are_the_validation_schemas(doc):
    generated = json.loads(json.dumps(openapi.body_schemas()))
    schemas = doc["components"]["schemas"]
    stale = [name for name, schema in generated.items()
             if schemas.get(name) != schema]
    assert not stale, ("run `python -m services.api.openapi`; stale: %s"
                       % stale)


def test_every_body_route_points_at_a_generated_schema(doc):
    names = set(openapi.body_schemas())
    used = set()
    for item in doc["paths"].values():
        for method in ("post", "put"):
            if method not in item or "requestBody" not in item[method]:
                continue
            ref = item[method]["requestBody"]["content"][
                "application/json"]["schema"]["$ref"]
            used.add(ref.rsplit("/", 1)[-1])
    assert used == names


def test_min_microversions_are_known_versions(doc):
    known = {v for v, _ in microversion.VERSIONS}
    for item in doc["paths"].values():
        for method in METHODS:
            first = item.get(method, {}).get("x-min-microversion")
            assert first is None or first in known
