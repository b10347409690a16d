"""Property-based fuzzing of the served ``/openapi.yaml`` in every mode.

For each ``[api] auth_strategy`` (noauth, http_basic, keystone) one real
deployment is started: the api (gunicorn, 2 workers), a scheduler, one
volume node with the file backend and a backup service, on PostgreSQL
and a RabbitMQ vhost of its own; keystone mode behind the session's real
Keystone.  schemathesis loads the API description the api serves and, for
every operation in it, generates requests (positive and negative
generation modes, hypothesis derandomized: the same choices on every run)
that are sent as:

* an administrator of a project (noauth ``admin:<project>``; http_basic
  ``operator``; keystone ``alpha-admin`` on project alpha),
* a plain member of it (noauth ``X-Roles: member``; keystone
  ``alpha-member``; http_basic knows only administrators),
* no one (http_basic and keystone): no credential, or a fuzzed one.

The check is schemathesis' ``not_a_server_error``: no answer may be 5xx
(nor missing: a reset or a time-out counts as a failure too); callers
without credentials must get a 4xx from every operation that needs one.
Real objects (a multiattach type, a volume, an attachment of it; the
project, the volume node's host, quota class ``default``) are put in the
path parameters (and in a few body fields and query parameters) of about
half the cases so that operations get past their 404s; they are checked,
and made again when a fuzzed request removed or changed them, before each
operation.  About half the other strings of a body are replaced by hostile
text (lone UTF-16 surrogates, characters beyond the BMP).  schemathesis'
conformance checks (status codes, content type, headers, body schemas)
also run on every answer: their findings are
printed as information, never a failure.

Budget: ``ASHLAR_FUZZ_EXAMPLES`` (default 6) examples per operation and
generation mode for each caller with credentials, a third of it (at least
2) for callers without: with 130 operations, some 7,000 cases over the
seven runs, about six minutes on two cores (Keystone's start included).
``ASHLAR_FUZZ_EXAMPLES=12`` doubles the campaign (14,586 cases, 0 answers
5xx, on 2026-11-29).  Each run prints its count of cases and 5xx; the
module prints a summary at its end (with ``-s``).
"""

import base64
import collections
import dataclasses
import os
import re
import uuid

import bcrypt
import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi import checks as openapi_checks

from deploy.testbed import harness

#: Examples per operation and generation mode, for each caller with
#: credentials; a third of it for callers without (all of their cases end
#: in the authentication middleware; keystone's take a round trip to
#: Keystone each).
EXAMPLES = int(os.environ.get("ASHLAR_FUZZ_EXAMPLES", "6"))
ANONYMOUS_EXAMPLES = max(2, EXAMPLES // 3)
#: The noauth and http_basic project (the harness's endpoint's).
PROJECT = "ba5eba11ba5eba11ba5eba11ba5eba11"
OPERATOR, OPERATOR_PASSWORD = "operator", "operator-Secret-1"
VOLUME_HOST = "node1"
BACKEND_HOST = VOLUME_HOST + "@file"
#: ``OpenStack-API-Version`` values a case is sent with; None keeps what
#: schemathesis generated (absent, or a fuzzed string).
VERSIONS = (None, "volume 3.0", "volume 3.27", "volume 3.44",
            "volume latest", "volume latest")
GENERATION_MODES = (schemathesis.GenerationMode.POSITIVE,
                    schemathesis.GenerationMode.NEGATIVE)
CONFORMANCE_CHECKS = (openapi_checks.status_code_conformance,
                      openapi_checks.content_type_conformance,
                      openapi_checks.response_headers_conformance,
                      openapi_checks.response_schema_conformance)
CREDENTIAL_HEADERS = ("X-Auth-Token", "Authorization")
#: Who fuzzes, per mode, in the order the runs go (the least powerful
#: first: an administrator's cases change the most).
RUNS = [("noauth", "member"), ("noauth", "admin"),
        ("http_basic", "anonymous"), ("http_basic", "admin"),
        ("keystone", "anonymous"), ("keystone", "member"),
        ("keystone", "admin")]
#: No shrinking (a case never fails the hypothesis test: findings are
#: collected), no example database, the same choices on every run.
HYPOTHESIS = hypothesis.settings(
    max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
    phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate),
    suppress_health_check=list(hypothesis.HealthCheck), print_blob=False)
REQUEST_TIMEOUT = 30
MA_TYPE_SPECS = {"multiattach": "<is> True"}


# -- what the runs found ------------------------------------------------------------
@dataclasses.dataclass
class Tally:
    """Cases, answers and findings of one run (a mode and a caller)."""

    mode: str
    persona: str
    cases: int = 0
    statuses: collections.Counter = dataclasses.field(
        default_factory=collections.Counter)
    #: Answers 5xx, or none at all (reset, time-out): failures.
    server_errors: list = dataclasses.field(default_factory=list)
    #: A caller without credentials let through: failures.
    let_through: list = dataclasses.field(default_factory=list)
    #: (check title, operation) -> statuses seen: information.
    conformance: dict = dataclasses.field(
        default_factory=lambda: collections.defaultdict(set))
    #: One line for each distinct failure (set at the end of the run).
    distinct: list = dataclasses.field(default_factory=list)
    #: Operations with no negative case (string path and header
    #: parameters only: any value is valid).
    no_negative: list = dataclasses.field(default_factory=list)
    #: Operations or generation modes schemathesis could not fuzz.
    notes: list = dataclasses.field(default_factory=list)
    #: Cases that could not be sent (an error on this side): not counted
    #: as cases; the test fails if they are more than a tenth.
    client_errors: collections.Counter = dataclasses.field(
        default_factory=collections.Counter)
    operations: int = 0
    #: Seconds spent waiting for answers.
    waited: float = 0.0

    @property
    def name(self) -> str:
        return "%s/%s" % (self.mode, self.persona)

    def line(self) -> str:
        examples = (ANONYMOUS_EXAMPLES if self.persona == "anonymous"
                    else EXAMPLES)
        statuses = " ".join("%s:%d" % (status, count) for status, count in
                            sorted(self.statuses.items(), key=str))
        return ("fuzz[%s]: %d cases over %d operations (<= %d examples per "
                "operation and generation mode, %.0f ms per answer), %d "
                "answers 5xx or none, %d let through without credentials; "
                "statuses %s; %d distinct conformance findings (information)"
                % (self.name, self.cases, self.operations, examples,
                   1000 * self.waited / max(self.cases, 1),
                   len(self.server_errors), len(self.let_through), statuses,
                   len(self.conformance)))


TALLIES: list[Tally] = []


# -- the deployment -------------------------------------------------------------------
def basic(user: str, password: str) -> str:
    pair = ("%s:%s" % (user, password)).encode()
    return "Basic " + base64.b64encode(pair).decode()


def htpasswd_line(user: str, password: str) -> str:
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4))
    return "%s:%s\n" % (user, hashed.decode())


class Targets:
    """Real objects for the path parameters, kept usable between
    operations by an administrator's client."""

    def __init__(self, admin: harness.Client, project: str) -> None:
        self.admin = admin
        self.project = project
        self.type_id = self.type_name = ""
        self.volume_id = self.attachment_id = ""
        self.made = collections.Counter()

    def path_parameters(self) -> dict[str, str]:
        return {"volume_id": self.volume_id,
                "attachment_id": self.attachment_id,
                "type_id": self.type_id, "key": "multiattach",
                "project_id": self.project, "class_name": "default",
                "host": BACKEND_HOST}

    def body_values(self) -> dict[str, str]:
        """Body fields (at any depth) that may get a real value."""
        return {"volume_uuid": self.volume_id, "source_volid": self.volume_id,
                "volume_type": self.type_name, "new_type": self.type_name,
                "project": self.project, "host": BACKEND_HOST}

    def ensure(self) -> None:
        """Make again whatever a fuzzed request deleted or spoilt."""
        if not self._type_ok():
            self._new_type()
            self.volume_id = ""
        if not self._volume_ok():
            self._new_volume()
            self.attachment_id = ""
        if not self._attachment_ok():
            self._new_attachment()

    def _type_ok(self) -> bool:
        if not self.type_id:
            return False
        shown = self.admin.get("/types/%s" % self.type_id)
        if shown.status_code != 200:
            return False
        vtype = shown.json()["volume_type"]
        return (vtype["name"] == self.type_name
                and vtype.get("os-volume-type-access:is_public", True)
                and (vtype.get("extra_specs") or {}).get("multiattach")
                == MA_TYPE_SPECS["multiattach"])

    def _volume_ok(self) -> bool:
        if not self.volume_id:
            return False
        shown = self.admin.get("/volumes/%s" % self.volume_id)
        if shown.status_code != 200:
            return False
        volume = shown.json()["volume"]
        return (volume["status"] in ("available", "in-use")
                and volume["volume_type"] == self.type_name
                and volume.get("multiattach") is True)

    def _attachment_ok(self) -> bool:
        if not self.attachment_id:
            return False
        shown = self.admin.get("/attachments/%s" % self.attachment_id,
                               headers={"OpenStack-API-Version":
                                        "volume 3.60"})
        return (shown.status_code == 200 and shown.json()["attachment"][
            "volume_id"] == self.volume_id)

    def _new_type(self) -> None:
        name = "fuzz-ma-%s" % uuid.uuid4().hex[:8]
        resp = self.admin.post("/types", {"volume_type": {
            "name": name, "extra_specs": MA_TYPE_SPECS}})
        assert resp.status_code == 200, resp.text
        self.type_id, self.type_name = resp.json()["volume_type"]["id"], name
        self.made["type"] += 1

    def _reset_limits(self) -> None:
        """Undo what fuzzed admin requests may have done to the project's
        quotas and to the volume service."""
        quotas = self.admin.get("/os-quota-sets/%s" % self.project)
        assert quotas.status_code == 200, quotas.text
        lifted = {key: -1 for key, value in quotas.json()["quota_set"].items()
                  if isinstance(value, int) and key != "id"}
        resp = self.admin.put("/os-quota-sets/%s" % self.project,
                              {"quota_set": lifted})
        assert resp.status_code == 200, resp.text
        resp = self.admin.put("/os-services/enable", {
            "host": BACKEND_HOST, "binary": "ashlar-volume"})
        assert resp.status_code == 200, resp.text

    def _new_volume(self) -> None:
        self._reset_limits()
        created = self.admin.create_volume(
            size=1, name="fuzz-target", volume_type=self.type_name)
        self.volume_id = created["id"]

        def settled() -> str | None:
            status = self.admin.volume_status(self.volume_id)
            return status if status in ("available", "error") else None

        status = harness.wait_for(settled, timeout=60,
                                  what="the fuzz target volume to settle")
        assert status == "available", "the fuzz target volume is %s" % status
        self.made["volume"] += 1

    def _new_attachment(self) -> None:
        resp = self.admin.post("/attachments", {"attachment": {
            "volume_uuid": self.volume_id, "instance_uuid": str(uuid.uuid4()),
            "connector": {"host": "fuzz-compute", "ip": "127.0.0.1",
                          "initiator": "iqn.fuzz", "multipath": False,
                          "platform": "x86_64", "os_type": "linux"}}},
            headers={"OpenStack-API-Version": "volume 3.60"})
        assert resp.status_code == 200, resp.text
        self.attachment_id = resp.json()["attachment"]["id"]
        done = self.admin.post("/attachments/%s/action" % self.attachment_id,
                               {"os-complete": None},
                               headers={"OpenStack-API-Version":
                                        "volume 3.60"})
        assert done.status_code == 204, done.text
        self.made["attachment"] += 1


class Site:
    """A running deployment in one mode, its callers' credentials, its
    API description as schemathesis loaded it, and the real objects."""

    def __init__(self, mode: str, dep: harness.Deployment,
                 credentials: dict[str, dict[str, str]], project: str):
        self.mode, self.dep, self.credentials = mode, dep, credentials
        self.root = "http://127.0.0.1:%d" % dep.port
        admin = harness.Client(self.root + "/v3", version="3.60")
        admin.session.headers.pop("X-Auth-Token")
        admin.session.headers.update(credentials["admin"])
        self.admin = admin
        self.targets = Targets(admin, project)
        #: Operations by whether they are for anonymous callers.
        self.operations: dict[bool, list] = {}
        self.invalid: list[str] = []

    def load_schema(self) -> None:
        """The API description as served, twice, without any
        schemathesis.toml: callers with credentials send theirs on every
        case (schemathesis generates no ``X-Auth-Token`` of its own, and
        never drops it); anonymous cases have schemathesis' (a fuzzed
        token, or none)."""
        for anonymous in (False, True):
            config = schemathesis.Config.from_dict({"generation": {
                "with-security-parameters": anonymous}})
            schema = schemathesis.openapi.from_url(
                self.root + "/openapi.yaml", config=config,
                timeout=REQUEST_TIMEOUT)
            operations = self.operations[anonymous] = []
            for result in schema.get_all_operations():
                if hasattr(result, "ok"):
                    operations.append(result.ok())
                else:
                    self.invalid.append(repr(result.err()))


def _start(dep: harness.Deployment, extra: str) -> None:
    dep.db_sync()
    dep.start("scheduler", "services.scheduler", "sched")
    dep.start("volume1", "services.volume", VOLUME_HOST)
    dep.start_backup()
    dep.start("api", "services.api", "api", extra=extra)


@pytest.fixture(scope="module")
def site(request, tmp_path_factory):
    """One deployment in ``request.param`` mode for its runs."""
    mode = request.param
    tmp = tmp_path_factory.mktemp("fuzz-" + mode)
    if mode == "keystone":
        keystone = request.getfixturevalue("keystone")
        personas = request.getfixturevalue("personas")
        project = personas.projects["alpha"]
        extra = ("[api]\nauth_strategy = keystone\n"
                 + keystone.authtoken_section(personas.service))
        credentials = {
            "admin": {"X-Auth-Token": keystone.project_token(
                personas["alpha-admin"])},
            "member": {"X-Auth-Token": keystone.project_token(
                personas["alpha-member"])},
            "anonymous": {}}
    elif mode == "http_basic":
        user_file = tmp / "htpasswd"
        user_file.write_text(htpasswd_line(OPERATOR, OPERATOR_PASSWORD))
        project = PROJECT
        extra = ("[api]\nauth_strategy = http_basic\n[http_basic]\n"
                 "user_file = %s\nproject_id = %s\n" % (user_file, PROJECT))
        credentials = {"admin": {"Authorization": basic(
            OPERATOR, OPERATOR_PASSWORD)}, "anonymous": {}}
    else:
        project = PROJECT
        extra = ""
        credentials = {
            "admin": {"X-Auth-Token": "fuzz-admin:%s" % PROJECT},
            "member": {"X-Auth-Token": "fuzz-member:%s" % PROJECT,
                       "X-Roles": "member"}}
    transport_url, remove_vhost = harness.broker_vhost()
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp, transport_url, db_url, api_workers=2)
    try:
        _start(dep, extra)
        found = Site(mode, dep, credentials, project)
        harness.wait_for(lambda: len(found.admin.pools()) == 1, timeout=60,
                         what="the volume node's pool (%s mode)" % mode)
        found.load_schema()
        yield found
    finally:
        dep.stop_all()
        drop()
        remove_vhost()


@pytest.fixture(scope="module", autouse=True)
def summary():
    """Print every run's figures once the module is done."""
    yield
    if not TALLIES:
        return
    print("\n== fuzz summary (schemathesis %s, hypothesis %s, derandomized;"
          " %d examples per operation and generation mode, %d without "
          "credentials) ==" % (schemathesis.__version__,
                               hypothesis.__version__, EXAMPLES,
                               ANONYMOUS_EXAMPLES))
    by_mode = collections.defaultdict(lambda: [0, 0])
    for tally in TALLIES:
        print(tally.line())
        for line in tally.distinct:
            print("  " + line)
        by_mode[tally.mode][0] += tally.cases
        by_mode[tally.mode][1] += len(tally.server_errors)
    for mode, (cases, errors) in by_mode.items():
        print("fuzz mode %s: %d cases, %d answers 5xx" % (mode, cases, errors))
    findings = collections.defaultdict(set)
    for tally in TALLIES:
        for (title, label), statuses in tally.conformance.items():
            findings[(title, label)] |= statuses
    if findings:
        print("-- conformance findings (information, not failures) --")
        for (title, label), statuses in sorted(findings.items()):
            print("  %s: %s (answers %s)" % (
                label, title, ",".join(str(s) for s in sorted(statuses))))


# -- the cases -------------------------------------------------------------------
PRINTABLE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e),
                    max_size=40)
#: Text no database takes as it comes or that is easy to mishandle: lone
#: UTF-16 surrogates (sent escaped, ``\\ud800``), characters beyond the
#: BMP (escaped as surrogate pairs), mixed with printable ASCII.
HOSTILE_TEXT = st.text(st.one_of(
    st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"]),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
    st.characters(min_codepoint=0x20, max_codepoint=0x7e)),
    min_size=1, max_size=8)


def _b64(raw: bytes | str) -> str:
    if isinstance(raw, str):
        raw = raw.encode()
    return base64.b64encode(raw).decode()


def bad_credentials(mode: str) -> st.SearchStrategy:
    """Headers that are no valid credential: None keeps what schemathesis
    generated (a random ``X-Auth-Token`` or none)."""
    if mode == "http_basic":
        return st.one_of(
            st.none(),
            PRINTABLE.map(lambda s: {"Authorization": s}),
            PRINTABLE.map(lambda s: {"Authorization": "Basic " + s}),
            st.binary(max_size=30).map(
                lambda b: {"Authorization": "Basic " + _b64(b)}),
            st.tuples(st.sampled_from([OPERATOR, "nobody", ""]),
                      PRINTABLE).map(lambda up: {
                          "Authorization": "Basic " + _b64("%s:%s" % up)}))
    return st.one_of(
        st.none(),
        PRINTABLE.map(lambda s: {"X-Auth-Token": s}),
        PRINTABLE.map(lambda s: {"X-Auth-Token": "gAAAAAB" + s}))


def _substitute(data, case, targets: Targets) -> None:
    """Put real values in about half the places that name an object."""
    real = targets.path_parameters()
    for name in list(case.path_parameters or {}):
        if name in real and data.draw(st.booleans()):
            case.path_parameters[name] = real[name]
    if isinstance(case.query, dict) and "marker" in case.query \
            and data.draw(st.booleans()):
        case.query["marker"] = (targets.attachment_id if "attachments"
                                in case.path else targets.volume_id)
    if isinstance(case.query, dict) and "volume_id" in case.query \
            and data.draw(st.booleans()):
        case.query["volume_id"] = targets.volume_id
    if isinstance(case.body, dict):
        _substitute_body(data, case.body, targets.body_values(), depth=0)


def _substitute_body(data, body: dict, values: dict, depth: int) -> None:
    if depth > 3:
        return
    for key, value in body.items():
        if isinstance(value, dict):
            _substitute_body(data, value, values, depth + 1)
        elif key in values and data.draw(st.booleans()):
            body[key] = values[key]
        elif isinstance(value, str) and data.draw(st.booleans()):
            body[key] = data.draw(HOSTILE_TEXT)


def _secured(operation) -> bool:
    """Whether the operation needs credentials (no ``security: []``)."""
    return operation.definition.raw.get("security") != []


def _sanitized(headers, persona: str) -> dict:
    shown = dict(headers or {})
    if persona != "anonymous":
        for name in CREDENTIAL_HEADERS:
            if name in shown:
                shown[name] = "<%s's credential>" % persona
    return shown


def _record(tally: Tally, kind: str, case, persona: str,
            response: schemathesis.Response | None, error: str = "") -> dict:
    request = response.request if response is not None else None
    body = request.body if request is not None else case.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    found = {
        "kind": kind, "mode": tally.mode, "persona": persona,
        "operation": case.operation.label,
        "method": case.method,
        "url": request.url if request is not None else case.formatted_path,
        "headers": _sanitized(request.headers if request is not None
                              else case.headers, persona),
        "body": (body[:2000] if isinstance(body, str) else body),
        "status": response.status_code if response is not None else None,
        "answer": response.text[:1000] if response is not None else error,
        "request_id": _request_id(response)}
    return found


def _request_id(response) -> str | None:
    """The answer's ``x-openstack-request-id`` (schemathesis keeps each
    header as a list of values)."""
    if response is None:
        return None
    for name, value in response.headers.items():
        if name.lower() == "x-openstack-request-id":
            return value[0] if isinstance(value, list) else value
    return None


def _send(site: Site, persona: str, case, headers: dict, tally: Tally):
    """Send ``case``; check it; note what it found."""
    tally.cases += 1
    try:
        response = case.call(base_url=site.root, headers=headers,
                             timeout=REQUEST_TIMEOUT, allow_redirects=False)
    except (requests.ConnectionError, requests.Timeout) as exc:
        tally.statuses["none"] += 1
        tally.server_errors.append(_record(tally, "no answer", case, persona,
                                           None, repr(exc)))
        return
    tally.statuses[response.status_code] += 1
    tally.waited += response.elapsed
    try:
        case.validate_response(response, checks=[not_a_server_error])
    except schemathesis.errors.FailureGroup:
        tally.server_errors.append(_record(tally, "server error", case,
                                           persona, response))
        return
    if persona == "anonymous" and _secured(case.operation) \
            and not 400 <= response.status_code < 500:
        tally.let_through.append(_record(tally, "let through", case,
                                         persona, response))
    try:
        # Information only: what schemathesis says of the document.
        case.validate_response(response, checks=list(CONFORMANCE_CHECKS))
    except schemathesis.errors.FailureGroup as group:
        for failure in group.exceptions:
            tally.conformance[(failure.title, case.operation.label)].add(
                response.status_code)
    except Exception as exc:  # noqa: BLE001 - a check that cannot run
        tally.conformance[("check error: %s" % type(exc).__name__,
                           case.operation.label)].add(response.status_code)


def fuzz_operation(site: Site, persona: str, operation,
                   generation_mode, tally: Tally) -> None:
    strategy = operation.as_strategy(generation_mode)
    credentials = site.credentials[persona]
    bad = bad_credentials(site.mode) if persona == "anonymous" else None

    @hypothesis.settings(HYPOTHESIS, max_examples=(
        ANONYMOUS_EXAMPLES if persona == "anonymous" else EXAMPLES))
    @hypothesis.given(data=st.data())
    def run(data):
        case = data.draw(strategy, label="case")
        version = data.draw(st.sampled_from(VERSIONS), label="version")
        if version is not None:
            if case.headers is None:
                case.headers = {}
            case.headers["OpenStack-API-Version"] = version
        _substitute(data, case, site.targets)
        headers = dict(credentials)
        if bad is not None:
            headers.update(data.draw(bad, label="credential") or {})
        try:
            _send(site, persona, case, headers, tally)
        except Exception as exc:  # noqa: BLE001 - counted, never shrunk
            tally.cases -= 1
            tally.client_errors["%s: %s" % (operation.label,
                                            type(exc).__name__)] += 1

    try:
        run()
    except hypothesis.errors.Unsatisfiable:
        tally.notes.append("%s: no %s case" % (operation.label,
                                               generation_mode.value))
    except schemathesis.errors.SchemathesisError as exc:
        tally.notes.append("%s: %s cases not generated: %r" % (
            operation.label, generation_mode.value, exc))


def _negatable(operation, anonymous: bool) -> bool:
    """Whether schemathesis can make a request of ``operation`` invalid:
    a body or a query can be; a string in a path or a header cannot (any
    value is one); anonymous cases can lose their ``X-Auth-Token``."""
    return bool(len(operation.body) or len(operation.query)
                or (anonymous and _secured(operation)))


def fuzz(site: Site, persona: str) -> Tally:
    tally = Tally(site.mode, persona)
    TALLIES.append(tally)
    anonymous = persona == "anonymous"
    for operation in site.operations[anonymous]:
        site.targets.ensure()
        tally.operations += 1
        for generation_mode in GENERATION_MODES:
            if generation_mode == schemathesis.GenerationMode.NEGATIVE \
                    and not _negatable(operation, anonymous):
                # NOTE: hypothesis would try some 460 times before it
                # says so (Unsatisfiable).
                tally.no_negative.append(operation.label)
                continue
            fuzz_operation(site, persona, operation, generation_mode, tally)
    return tally


# -- the report of a failure -----------------------------------------------------------
#: The start of an oslo.log record: "<date> <time> <pid> <LEVEL> <logger>".
LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ (\d+) "
                        r"([A-Z]+) (\S+) ?(.*)$")


#: The api log's lines shown for a finding, when they are many: the first
#: ones, Ashlar's frames of the tracebacks, and the last ones; each of at
#: most so many characters.
LOG_HEAD, LOG_TAIL, LOG_WIDTH = 6, 6, 300


def api_log_lines(log: str, request_id: str | None) -> list[str]:
    """The api log's records of ``request_id``, each with what follows it
    from the same process: its traceback (oslo.log prefixes those lines
    without the id) and the lines of a message on several."""
    if not request_id:
        return []
    lines = log.splitlines()
    out = []
    for i, line in enumerate(lines):
        record = LOG_RECORD.match(line)
        if request_id not in line or record is None:
            continue
        out.append(line)
        for follow in lines[i + 1:i + 150]:
            other = LOG_RECORD.match(follow)
            if other is not None and (other.group(1) != record.group(1)
                                      or "req-" in follow):
                break
            out.append(follow)
    return out


def _shown(lines: list[str], request_id: str | None) -> str:
    if not lines:
        return "  (nothing logged for %s)" % request_id
    if len(lines) > 4 * (LOG_HEAD + LOG_TAIL):
        middle = lines[LOG_HEAD:-LOG_TAIL]
        ours = []
        for i, line in enumerate(middle):
            if 'File "%s/' % harness.REPO in line:
                ours += middle[i:i + 2]
        lines = (lines[:LOG_HEAD]
                 + ["... (of %d lines, Ashlar's frames:)" % len(middle)]
                 + ours + ["..."] + lines[-LOG_TAIL:])
    return "\n".join(line if len(line) <= LOG_WIDTH
                     else line[:LOG_WIDTH] + " ..." for line in lines)


def _signature(found: dict, lines: list[str]) -> tuple:
    """What makes two findings the same: the operation, the status and
    the error the api logged (the first line of the request's first
    ERROR record, without the request's method and path, up to its first
    quoted value)."""
    cause = found["answer"][:100]
    for line in lines:
        record = LOG_RECORD.match(line)
        if record is not None and record.group(2) == "ERROR" \
                and found["request_id"] in line:
            message = record.group(4).split("] ", 1)[-1]
            if message.startswith("Unexpected error on "):
                message = message.split(": ", 1)[-1]
            # NOTE: up to the first quoted value (a key, a fuzzed input:
            # it may hold quotes, and go on over several lines).
            head = re.split("['\"]", message, maxsplit=1)
            cause = (head[0] + "<...>" if len(head) > 1 else head[0])[:160]
            break
    return found["operation"], found["status"], cause


def describe(site: Site, findings: list[dict],
             limit: int = 8) -> tuple[str, list[str]]:
    """Each distinct finding once (how often, one example in full: the
    request, the answer, the api log's lines and traceback); and a line
    for each."""
    log = site.dep.log("api")
    groups: dict[tuple, list] = {}
    for found in findings:
        lines = api_log_lines(log, found["request_id"])
        groups.setdefault(_signature(found, lines), []).append(
            (found, lines))
    parts = []
    short = ["%d x %s -> %s: %s" % (len(members), label, status, cause)
             for (label, status, cause), members in groups.items()]
    for (label, status, cause), members in list(groups.items())[:limit]:
        found, lines = members[0]
        parts.append(
            "%d x %s [%s/%s] %s -> %s: %s\n  e.g. %s %s\n  headers: %s\n"
            "  body: %r\n  answer: %s\n  api log:\n%s" % (
                len(members), found["kind"], found["mode"], found["persona"],
                label, status, cause, found["method"], found["url"],
                found["headers"], found["body"], found["answer"],
                _shown(lines, found["request_id"])))
    if len(groups) > limit:
        parts.append("... and %d more distinct findings" % (
            len(groups) - limit))
    return "\n\n".join(parts), short


# -- the tests ------------------------------------------------------------------------
@pytest.mark.parametrize("site,persona", RUNS, indirect=["site"],
                         ids=["%s-%s" % run for run in RUNS], scope="module")
def test_fuzz_openapi(site, persona, capsys):
    """schemathesis against the served ``/openapi.yaml``: no answer 5xx,
    nothing let through without credentials."""
    operations = site.operations[persona == "anonymous"]
    assert operations, "schemathesis found no operation in the document"
    tally = fuzz(site, persona)
    errors, errors_short = describe(site, tally.server_errors)
    through, through_short = describe(site, tally.let_through)
    tally.distinct = errors_short + through_short
    with capsys.disabled():
        print("\n" + tally.line())
        for line in tally.distinct:
            print("  " + line)
        if site.invalid:
            print("  operations schemathesis could not load: %s"
                  % site.invalid)
        if tally.no_negative:
            print("  no negative case (string path and header parameters "
                  "only): %s" % ", ".join(tally.no_negative))
        if tally.notes:
            print("  not fuzzed: %s" % "; ".join(tally.notes))
        if tally.client_errors:
            print("  not sent (errors on this side): %s"
                  % dict(tally.client_errors))
        print("  real objects made in this mode so far (the first ones "
              "included): %s" % dict(site.targets.made))
    assert not site.invalid, site.invalid
    assert tally.cases >= len(operations), (
        "only %d cases ran" % tally.cases)
    assert sum(tally.client_errors.values()) <= tally.cases / 10, (
        "too many cases could not be sent: %s" % dict(tally.client_errors))
    if tally.server_errors:
        pytest.fail("%d answers 5xx (or none) in %s:\n\n%s" % (
            len(tally.server_errors), tally.name, errors), pytrace=False)
    if tally.let_through:
        pytest.fail("%d requests without valid credentials were let through "
                    "in %s:\n\n%s" % (len(tally.let_through), tally.name,
                                       through), pytrace=False)
