"""A volume cluster's rolling upgrade under load from 0.2.0, on MariaDB
(tests/functional/rolling_upgrade.py says what is done and checked)."""

import pytest

from tests.functional import rolling_upgrade


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return rolling_upgrade.release_tree(tmp_path_factory)


def test_a_clusters_rolling_upgrade_under_load(tmp_path, vhost, release):
    with rolling_upgrade.deployed(tmp_path, vhost, "mysql", release) as roll:
        rolling_upgrade.upgrade_under_load(roll)
