"""Moving volumes between backends through unmodified ``cinder`` and
``openstack``: a retype with ``on-demand`` migration each way, and an
admin's ``cinder migrate`` to a named pool.  A second volume node with a
backend of another name (``other``) serves this module only."""

import pytest

from deploy.testbed import harness
from tests.compat.conftest import VOLUME_HOST, properties, wait_volume

HERE, THERE = "%s@file#file" % VOLUME_HOST, "compat2@other#other"


@pytest.fixture(scope="module")
def two_backends(ashlar, cinder):
    """``compat2``'s ``other`` beside ``compat1``'s ``file``, and a type
    for each."""
    dep = ashlar.deployment
    dep.start("volume2", "services.volume", "compat2", backends="other")
    client = ashlar.http()
    harness.wait_for(lambda: THERE in client.pools(), timeout=60,
                     what="compat2's pool")
    for name in ("file", "other"):
        cinder("type-create", "on-" + name).ok()
        cinder("type-key", "on-" + name, "set",
               "volume_backend_name=" + name).ok()
    yield client
    dep.stop("volume2")
    harness.wait_for(lambda: THERE not in client.pools(), timeout=60,
                     what="compat2's pool to go")
    for name in ("file", "other"):
        cinder("type-delete", "on-" + name).ok()


def _moved(cinder, ashlar, volume_id: str, host: str) -> dict:
    def there():
        shown = properties(cinder("show", volume_id).ok().stdout)
        return (shown["status"] == "available"
                and shown["os-vol-host-attr:host"] == host and shown)
    return harness.wait_for(there, timeout=60, what="the volume at " + host)


def test_retypes_and_a_migrate_move_the_volume(two_backends, cinder,
                                               openstack, ashlar):
    made = properties(cinder("create", "--volume-type", "on-file", "--name",
                             "mover", "1").ok().stdout)
    wait_volume(ashlar, made["id"], "available")
    refused = cinder("retype", made["id"], "on-other")
    assert refused.returncode == 1 and "migration_policy is never" in \
        refused.stderr
    cinder("retype", "--migration-policy", "on-demand", made["id"],
           "on-other").ok()
    shown = _moved(cinder, ashlar, made["id"], THERE)
    assert (shown["volume_type"], shown["migration_status"],
            shown["name"]) == ("on-other", "success", "mover")
    openstack("volume", "set", "--type", "on-file", "--retype-policy",
              "on-demand", made["id"], parse=False).ok()
    assert _moved(cinder, ashlar, made["id"], HERE)["volume_type"] == \
        "on-file"
    plain = properties(cinder("create", "1").ok().stdout)
    wait_volume(ashlar, plain["id"], "available")
    shown = properties(cinder("show", plain["id"]).ok().stdout)
    target = THERE if shown["os-vol-host-attr:host"] == HERE else HERE
    cinder("migrate", plain["id"], target).ok()
    assert _moved(cinder, ashlar, plain["id"], target)[
        "migration_status"] == "success"
    for volume_id in (made["id"], plain["id"]):
        cinder("delete", volume_id).ok()
        wait_volume(ashlar, volume_id, None)
