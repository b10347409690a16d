"""common/quota.py without a database: what a change adds, and which
Cinder error a counter over its limit raises."""

import pytest

from common import exception
from common import quota

UNLIMITED = quota.UNLIMITED


def _found(change, **limits):
    found = dict.fromkeys(change.names(), UNLIMITED)
    found.update(limits)
    return found


def test_a_snapshot_adds_to_snapshots_and_gigabytes_of_its_type():
    change = quota.Change("gold", snapshots=1, gigabytes=5)
    assert change.counters() == {"snapshots": 1, "snapshots_gold": 1,
                                 "gigabytes": 5, "gigabytes_gold": 5}
    assert quota.Change("gold", volumes=1, gigabytes=2).counters() == {
        "volumes": 1, "volumes_gold": 1, "gigabytes": 2, "gigabytes_gold": 2}


@pytest.mark.parametrize("name", ["snapshots", "snapshots_gold"])
def test_snapshots_over_the_limit(name):
    change = quota.Change("gold", snapshots=1, gigabytes=1)
    usage = quota.Usage(snapshots=3, type_snapshots=3)
    with pytest.raises(exception.SnapshotLimitExceeded) as caught:
        quota.check(change, _found(change, **{name: 3}), usage)
    assert str(caught.value) == (
        "Maximum number of snapshots allowed (3) exceeded")
    quota.check(change, _found(change, **{name: 4}), usage)


def test_snapshot_gigabytes_count_against_gigabytes():
    change = quota.Change("gold", snapshots=1, gigabytes=4)
    usage = quota.Usage(volumes=1, gigabytes=8, type_volumes=1,
                        type_gigabytes=8, snapshots=1, type_snapshots=1)
    with pytest.raises(exception.VolumeSizeExceedsAvailableQuota) as caught:
        quota.check(change, _found(change, gigabytes=11), usage)
    assert str(caught.value) == (
        "Requested volume or snapshot exceeds allowed gigabytes quota. "
        "Requested 4G, quota is 11G and 8G has been consumed.")
    quota.check(change, _found(change, gigabytes=12), usage)


def test_a_volume_type_named_like_a_resource_is_told_apart():
    """``volumes_snapshots`` is the volumes of type ``snapshots``."""
    change = quota.Change("snapshots", volumes=1, gigabytes=1)
    with pytest.raises(exception.VolumeLimitExceeded):
        quota.check(change, _found(change, volumes_snapshots=0),
                    quota.Usage())
