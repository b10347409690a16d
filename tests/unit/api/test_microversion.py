"""Microversion header parsing, response headers, the versions document,
and the rule that code checks a microversion by its name."""

import pathlib
import re

import pytest

import services
from services.api import faults, microversion, versions
from services.api.microversion import APIVersion

MAX = str(microversion.MAX_VERSION)
#: A microversion spelled as a number: ``APIVersion(3, 40)``, ``V(3, 40)``,
#: a tuple ``(3, 40)`` or a string ``"3.40"``.
BARE = re.compile(r"\(\s*3\s*,\s*\d+\s*\)|[\"']3\.\d+[\"']")
SERVICES = pathlib.Path(services.__file__).parent
#: The one module that may spell microversions as numbers.
TABLE = pathlib.Path(microversion.__file__)
NAMED = {name: value for name, value in vars(microversion).items()
         if isinstance(value, APIVersion)
         and name not in ("MIN_VERSION", "MAX_VERSION")}


def _code() -> dict[pathlib.Path, str]:
    """Every Python file of services/ but the named table itself."""
    return {path: path.read_text() for path in sorted(SERVICES.rglob("*.py"))
            if path != TABLE}


def parse(value):
    return microversion.parse_header({"OpenStack-API-Version": value})


def test_versions_run_from_3_0_to_the_maximum_in_order():
    parsed = [APIVersion.parse(version) for version, _ in microversion.VERSIONS]
    assert parsed[0] == APIVersion(3, 0)
    assert parsed[-1] == microversion.MAX_VERSION == APIVersion(3, 71)
    assert parsed == [APIVersion(3, minor) for minor in range(72)]
    assert all(comment for _, comment in microversion.VERSIONS)


def test_api_version_orders_and_prints():
    assert APIVersion(3, 9) < APIVersion(3, 10) < APIVersion(4, 0)
    assert str(APIVersion(3, 27)) == "3.27"
    assert APIVersion.parse("3.27") == APIVersion(3, 27)
    assert APIVersion.parse("latest") == microversion.MAX_VERSION


@pytest.mark.parametrize("text", ["3", "3.01", "03.1", "LATEST", "3.x", "abc",
                                  "3.0.1", "", "-3.0"])
def test_api_version_rejects_bad_format(text):
    with pytest.raises(microversion.InvalidVersionString) as exc:
        APIVersion.parse(text)
    assert exc.value.message == (
        f"API Version String {text} is of invalid format. "
        "Must be of format MajorNum.MinorNum.")


def test_no_header_is_3_0():
    assert microversion.parse_header({}) == APIVersion(3, 0)


def test_legacy_header_is_ignored():
    headers = {"X-OpenStack-Volume-API-Version": "3.50"}
    assert microversion.parse_header(headers) == APIVersion(3, 0)


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("OpenStack-API-Version", "volume 3.50", APIVersion(3, 50)),
    ("OPENSTACK-API-VERSION", "volume 3.50", APIVersion(3, 50)),
    ("openstack-api-version", "volume   3.54", APIVersion(3, 54)),
    ("OpenStack-API-Version", "volume latest", APIVersion(3, 71)),
    ("OpenStack-API-Version", "volume 3.0", APIVersion(3, 0)),
    ("OpenStack-API-Version", "volume-ish 3.54", APIVersion(3, 54)),
    ("OpenStack-API-Version", "compute 2.1, volume 3.50", APIVersion(3, 50)),
    ("OpenStack-API-Version", "volume 3.50, volume 3.60", APIVersion(3, 50)),
])
def test_parse_header(name, value, expected):
    assert microversion.parse_header({name: value}) == expected


@pytest.mark.parametrize("value", ["compute 2.1", "VOLUME 3.54",
                                   "block-storage 3.54", "", "volume",
                                   "volume 3.54 extra"])
def test_header_without_a_two_token_volume_element_is_400(value):
    with pytest.raises(microversion.BadVersionHeader) as exc:
        parse(value)
    assert exc.value.status == 400
    message = exc.value.body["badRequest"]["message"]
    assert exc.value.body == {"badRequest": {"code": 400, "message": message}}
    assert message.startswith(faults.GENERIC_BAD_REQUEST)
    assert "OpenStack-API-Version header must name a 'volume'" in message
    assert exc.value.headers == {}


@pytest.mark.parametrize("value", ["3.x", "abc", "3", "3.01", "LATEST"])
def test_malformed_version_is_400_without_version_headers(value):
    with pytest.raises(microversion.InvalidVersionString) as exc:
        parse(f"volume {value}")
    assert exc.value.status == 400
    assert exc.value.body == {"badRequest": {
        "code": 400,
        "message": f"API Version String {value} is of invalid format. "
                   "Must be of format MajorNum.MinorNum."}}
    assert exc.value.headers == {}


@pytest.mark.parametrize("value", ["3.72", "3.99", "2.9", "4.0"])
def test_out_of_range_is_406_echoing_the_version(value):
    with pytest.raises(microversion.VersionNotAcceptable) as exc:
        parse(f"volume {value}")
    assert exc.value.status == 406
    assert exc.value.body == {"computeFault": {
        "code": 406,
        "message": f"Version {value} is not supported by the API. "
                   f"Minimum is 3.0 and maximum is {MAX}."}}
    assert exc.value.headers == {
        "OpenStack-API-Version": f"volume {value}",
        "Vary": "OpenStack-API-Version"}


@pytest.mark.parametrize("value", ["2.0", "1.0", "11.0"])
def test_legacy_out_of_range_is_406_without_version_headers(value):
    with pytest.raises(microversion.VersionNotAcceptable) as exc:
        parse(f"volume {value}")
    assert exc.value.status == 406
    assert exc.value.body["computeFault"]["message"].startswith(
        f"Version {value} is not supported by the API.")
    assert exc.value.headers == {}


def test_response_headers():
    assert microversion.response_headers(APIVersion(3, 27)) == {
        "OpenStack-API-Version": "volume 3.27",
        "Vary": "OpenStack-API-Version"}


def test_every_supported_version_gets_response_headers():
    for version, _ in microversion.VERSIONS:
        assert microversion.response_headers(APIVersion.parse(version))


def test_versions_document():
    assert versions.versions_document("http://HOST:8776") == {"versions": [{
        "id": "v3.0",
        "status": "CURRENT",
        "version": MAX,
        "min_version": "3.0",
        "updated": versions.UPDATED,
        "links": [
            {"rel": "describedby", "type": "text/html",
             "href": "https://docs.openstack.org/"},
            {"rel": "self", "href": "http://HOST:8776/v3/"},
        ],
        "media-types": [{
            "base": "application/json",
            "type": "application/vnd.openstack.volume+json;version=3"}],
    }]}


def test_versions_document_key_order():
    entry = versions.versions_document("http://h")["versions"][0]
    assert list(entry) == ["id", "status", "version", "min_version",
                           "updated", "links", "media-types"]
    assert entry["updated"].endswith("Z")


@pytest.mark.parametrize(("base", "href"), [
    ("http://HOST:8776", "http://HOST:8776/v3/"),
    ("http://HOST:8776/", "http://HOST:8776/v3/"),
    ("http://HOST:8776/v3", "http://HOST:8776/v3/"),
    ("http://HOST:8776/v3/", "http://HOST:8776/v3/"),
    ("https://other:443/volume", "https://other:443/volume/v3/"),
    ("https://other/volume/v3/", "https://other/volume/v3/"),
    ("http://dev3", "http://dev3/v3/"),
])
def test_versions_self_link(base, href):
    links = versions.versions_document(base)["versions"][0]["links"]
    assert links[1] == {"rel": "self", "href": href}


def test_public_endpoint_overrides_the_request():
    doc = versions.versions_document("http://internal:8776/v3",
                                     public_endpoint="https://cloud/volume")
    assert doc["versions"][0]["links"][1]["href"] == "https://cloud/volume/v3/"


@pytest.mark.parametrize("line", [
    "if version >= APIVersion(3, 40):", "version >= V(3,4)",
    "base.version(req) >= (3, 23)", 'if str(version) == "3.27":'])
def test_a_bare_microversion_is_recognised(line):
    assert BARE.search(line)


def test_code_checks_microversions_by_name():
    """Outside microversion.py, services/ names every microversion it
    checks (``microversion.NEW_ATTACH``), never spells its number."""
    code = _code()
    assert len(code) > 50
    bare = ["%s:%d: %s" % (path.relative_to(SERVICES.parent), number,
                           line.strip())
            for path, text in code.items()
            for number, line in enumerate(text.splitlines(), 1)
            if BARE.search(line)]
    assert bare == []


def test_every_name_is_one_version_of_the_history_in_order():
    known = {APIVersion.parse(version) for version, _ in microversion.VERSIONS}
    assert "NEW_ATTACH" in NAMED and "MULTIATTACH_VOLUMES" not in NAMED
    assert set(NAMED.values()) <= known
    assert len(set(NAMED.values())) == len(NAMED)
    assert list(NAMED.values()) == sorted(NAMED.values())


def test_every_name_is_checked_somewhere():
    """A name is for a version Ashlar checks: a name nothing uses goes."""
    code = "\n".join(_code().values())
    unused = [name for name in NAMED
              if not re.search(r"\b%s\b" % name, code)]
    assert unused == []
