"""A volume cluster's rolling upgrade under load, from release 0.2.0
(clusters; volume RPC 1.8) to this one: the deployment, its load and the
steps, which ``test_rolling_upgrade.py`` (PostgreSQL) and
``test_rolling_upgrade_mysql.py`` (MariaDB) run, one file each so that
the two run on different workers.

The previous release runs everything at first: the api, the scheduler,
two members of cluster ``c1`` (the file backend on a folder both share,
tooz's file locks: the members are on one host) and ``node3`` (backend
``other``, outside the cluster: where retypes and migrations go).  The
database is at this release's schema first (``db sync``, as
docs/operations.md "Rolling upgrades" says).  Attach cycles on shared
multiattach volumes and a volume churn (``benchmarks/fault_campaign.py``'s
load) run throughout.  The order is the documented one: the members one
at a time (each stopped gracefully and started on this release with the
volume RPC pinned to 1.8), then ``node3``, the scheduler and the api;
then each process once more without the pin.  With one member of each
release, and at the end: extend, clone, retype (a move to ``other``), an
admin's migrate and a cascade delete each end as they should, and a 0.2.0
compute agent and a 0.3.0 one (both through the api's RPC door) each
read what the other wrote to a shared volume.  The load goes on in every
step, sees no answer a client would not retry, and leaves nothing in a
transitional state.
"""

import contextlib

from benchmarks import fault_campaign
from deploy.testbed import harness
from tests.functional import storage_story

#: Release 0.2.0: clusters, backups, volume RPC 1.8, migrations to 0015.
RELEASE = "be8ba0b"
PIN = "[upgrade_levels]\nashlar_volume = 1.8\n"
SETTINGS = fault_campaign.Settings(concurrency=2, pool=2, churn=1,
                                   window=90.0, rpc_call_timeout=10)
MA_TYPE = {"volume_type": {"name": "multiattach", "extra_specs": {
    "multiattach": "<is> True"}}}
OTHER_TYPE = {"volume_type": {"name": "other", "extra_specs": {
    "volume_backend_name": "other"}}}
CLUSTER_TYPE = {"volume_type": {"name": "clustered", "extra_specs": {
    "volume_backend_name": "file"}}}
SHARED_TYPE = {"volume_type": {"name": "clustered-shared", "extra_specs": {
    "volume_backend_name": "file", "multiattach": "<is> True"}}}
LIMIT = 90.0
#: Attachment settings of every process: an attachment whose create or
#: delete timed out at the api (a loaded machine) is resolved within
#: ``attachment_transition_timeout`` (two RPC timeouts) plus
#: ``attachment_check_interval`` of its last change, well inside
#: ``LIMIT``; with the defaults (120 s and 60 s) the settled check at the
#: end could not wait for it.
SETTLING = ("[DEFAULT]\nattachment_transition_timeout = %d\n"
            "attachment_check_interval = %d\n"
            % (2 * SETTINGS.rpc_call_timeout, SETTINGS.check_interval))


def release_tree(tmp_path_factory) -> str:
    """Release 0.2.0's source tree."""
    return harness.release_tree(tmp_path_factory.mktemp("release-0.2.0"),
                                RELEASE)


class Rollout:
    """The deployment, which release each process runs, and its load."""

    def __init__(self, dep: harness.Deployment, release: str) -> None:
        self.dep = dep
        self.release = release
        self.client = harness.Client(dep.endpoint)
        member = ("[DEFAULT]\ncluster = c1\n[coordination]\nbackend_url = "
                  "file://%s\n[file]\nfile_volume_dir = %s\n"
                  % (dep.tmp / "coordination", dep.tmp / "shared"))
        #: name -> (module, host, backends, extra)
        self.procs = {
            "volume1": ("services.volume", "node1", "file", member),
            "volume2": ("services.volume", "node2", "file", member),
            "volume3": ("services.volume", "node3", "other", ""),
            "scheduler": ("services.scheduler", "sched", "file", ""),
            "api": ("services.api", "api", "file", "")}
        self.ledger = fault_campaign.Ledger()
        self.tally = fault_campaign.Tally()
        self.load: fault_campaign.Load | None = None

    def start(self, name: str, tree: str | None, pin: bool) -> None:
        module, host, backends, extra = self.procs[name]
        self.dep.start(name, module, host, tree=tree, backends=backends,
                       extra=SETTLING + extra + (PIN if pin else ""))

    def restart(self, name: str, tree: str | None, pin: bool) -> None:
        """Stop ``name`` gracefully, start it again (on ``tree``), and
        wait until it serves: a volume node up, the api answering."""
        self.dep.stop(name)
        self.start(name, tree, pin)
        if name.startswith("volume"):
            host = self.procs[name][1] + "@" + self.procs[name][2]
            harness.wait_for(lambda: self.client.services_up().get(
                ("cinder-volume", host)) == "up", timeout=LIMIT,
                what="%s up again" % host)
        harness.wait_for(lambda: self.client.get("/volumes").status_code
                         == 200, timeout=LIMIT, what="the api answering")

    def start_load(self) -> None:
        assert self.client.post("/types", MA_TYPE).status_code == 200
        pool = []
        for _ in range(SETTINGS.pool):
            volume = self.client.create_volume(volume_type="multiattach")
            self.client.wait_status(volume["id"], "available", timeout=LIMIT)
            pool.append(volume["id"])
            self.ledger.volumes[volume["id"]] = "live"
        self.load = fault_campaign.Load(self.dep.endpoint, pool, self.ledger,
                                        SETTINGS)
        self.load.start(self.tally)

    def load_goes_on(self) -> None:
        """Wait until the load completes more cycles than it had."""
        done = self.tally.ok
        harness.wait_for(lambda: self.tally.ok >= done + 4, timeout=LIMIT,
                         what="the load to go on")


@contextlib.contextmanager
def deployed(tmp_path, vhost: str, kind: str, release: str):
    """The previous release's deployment on database ``kind``, this
    release's schema, the load running: a :class:`Rollout`."""
    db_url, drop = harness.database(kind)
    dep = harness.Deployment(tmp_path, vhost, db_url, rpc_call_timeout=10,
                             service_down_time=10)
    dep.db_sync()
    roll = Rollout(dep, release)
    try:
        for name in roll.procs:
            roll.start(name, release, pin=False)
        harness.wait_for(lambda: len(roll.client.pools()) == 2,
                         timeout=LIMIT, what="c1's and node3's pools")
        for vtype in (OTHER_TYPE, CLUSTER_TYPE, SHARED_TYPE):
            assert roll.client.post("/types", vtype).status_code == 200
        roll.start_load()
        yield roll
    finally:
        if roll.load is not None:
            roll.load.stop()
        dep.stop_all()
        drop()


def _volume(client: harness.Client, volume_id: str) -> dict:
    return client.get("/volumes/%s" % volume_id).json()["volume"]


def _action(client: harness.Client, volume_id: str, body: dict) -> None:
    resp = client.post("/volumes/%s/action" % volume_id, body)
    assert resp.status_code == 202, resp.text


def _operations(client: harness.Client) -> None:
    """On the cluster: extend, clone; retype the volume to ``other`` (a
    move to node3); an admin's migrate; a cascade delete (the clone and
    its snapshot)."""
    vid = client.create_volume(volume_type="clustered")["id"]
    client.wait_status(vid, "available", timeout=LIMIT)
    _action(client, vid, {"os-extend": {"new_size": 2}})
    harness.wait_for(lambda: _volume(client, vid)["size"] == 2,
                     timeout=LIMIT, what="the extend")
    client.wait_status(vid, "available", timeout=LIMIT)
    clone = client.create_volume(size=2, source_volid=vid)["id"]
    client.wait_status(clone, "available", timeout=LIMIT)
    _action(client, vid, {"os-retype": {"new_type": "other",
                                        "migration_policy": "on-demand"}})
    harness.wait_for(lambda: _volume(client, vid)["os-vol-host-attr:host"]
                     == "node3@other#other", timeout=LIMIT, what="the retype")
    client.wait_status(vid, "available", timeout=LIMIT)
    _migrate_to_the_other_side(client)
    snap = client.post("/snapshots", {"snapshot": {"volume_id": clone}})
    assert snap.status_code == 202, snap.text
    snap_id = snap.json()["snapshot"]["id"]
    harness.wait_for(lambda: client.get("/snapshots/%s" % snap_id).json()[
        "snapshot"]["status"] == "available", timeout=LIMIT,
        what="the snapshot")
    assert client.delete("/volumes/%s?cascade=true" % clone
                         ).status_code == 202
    assert client.delete("/volumes/%s" % vid).status_code == 202
    for gone in (clone, vid):
        client.wait_status(gone, None, timeout=LIMIT)
    assert client.get("/snapshots/%s" % snap_id).status_code == 404


def _agents_across_releases(roll: Rollout) -> None:
    """A 0.2.0 compute agent and a 0.3.0 one, each through the api's RPC
    door: what one writes through its attachment of a shared volume on
    the cluster, the other reads through its own."""
    old = storage_story.agent(roll.dep, "cmp-old", tree=roll.release)
    new = storage_story.agent(roll.dep, "cmp-new")
    vid = roll.client.create_volume(volume_type="clustered-shared")["id"]
    roll.client.wait_status(vid, "available", timeout=LIMIT)
    for writer, reader, data in ((old, new, storage_story.BEFORE),
                                 (new, old, storage_story.AFTER)):
        storage_story.write_through(writer, vid, data)
        assert storage_story.read_through(reader, vid, len(data)) == data
    roll.client.wait_status(vid, "available", timeout=LIMIT)
    assert roll.client.delete("/volumes/%s" % vid).status_code == 202


def _migrate_to_the_other_side(client: harness.Client) -> None:
    """A volume of the default type (any backend takes it) moved by an
    admin from where it was placed to the other side (the cluster's pool
    or node3's), then deleted."""
    vid = client.create_volume()["id"]
    client.wait_status(vid, "available", timeout=LIMIT)
    source = _volume(client, vid)["os-vol-host-attr:host"]
    there = ("c1@file#file" if source == "node3@other#other"
             else "node3@other#other")
    _action(client, vid, {"os-migrate_volume": {
        "host": there, "force_host_copy": False, "lock_volume": False}})
    harness.wait_for(lambda: _volume(client, vid)["migration_status"]
                     in ("success", "error"), timeout=LIMIT,
                     what="the migration")
    moved = _volume(client, vid)
    assert (moved["migration_status"], moved["status"]) == (
        "success", "available"), (source, moved)
    assert moved["os-vol-host-attr:host"] != source, (source, moved)
    assert client.delete("/volumes/%s" % vid).status_code == 202
    client.wait_status(vid, None, timeout=LIMIT)


def _unsettled(roll: Rollout) -> list[str]:
    """Volumes still in a transitional state."""
    volumes = roll.client.get("/volumes/detail?all_tenants=1").json()[
        "volumes"]
    return ["%s %s" % (v["id"], v["status"]) for v in volumes
            if v["status"] in fault_campaign.TRANSITIONAL]


def upgrade_under_load(roll: Rollout) -> None:
    """The steps, the operations between them, the checks at the end."""
    roll.load_goes_on()
    roll.restart("volume1", None, pin=True)
    roll.load_goes_on()
    # One member of each release: either may take any of the cluster's
    # messages.
    _operations(roll.client)
    _agents_across_releases(roll)
    roll.restart("volume2", None, pin=True)
    roll.load_goes_on()
    for name in ("volume3", "scheduler", "api"):
        roll.restart(name, None, pin=True)
        roll.load_goes_on()
    for name in roll.procs:
        roll.restart(name, None, pin=False)
        roll.load_goes_on()
    _operations(roll.client)
    _agents_across_releases(roll)
    assert roll.load is not None
    roll.load.stop()
    assert roll.tally.fatal == {}, roll.tally.samples
    fault_campaign.delete_held(roll.dep.endpoint, roll.ledger, LIMIT)
    assert roll.ledger.attachments == {} and roll.ledger.lost == []
    left: list[list[str]] = [[]]

    def settled() -> bool:
        left[0] = _unsettled(roll)
        return not left[0]
    assert fault_campaign.waited(settled, LIMIT, interval=0.5), left[0]
    for name in roll.procs:
        assert "Traceback" not in roll.dep.log(name), name
