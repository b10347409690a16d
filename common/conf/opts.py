"""Entry point for oslo-config-generator (``oslo.config.opts``)."""

from common.conf import agent
from common.conf import agent_auth
from common.conf import api
from common.conf import attachments
from common.conf import backup
from common.conf import coordination
from common.conf import database
from common.conf import default
from common.conf import quota
from common.conf import scheduler
from common.conf import upgrade_levels
from common.conf import volume


def list_opts() -> list:
    """Return (group, options) pairs for every Ashlar option."""
    result = []
    for module in (default, quota, agent, agent_auth, api, attachments, backup,
                   coordination, scheduler, upgrade_levels, volume, database):
        result.extend(module.list_opts())
    return result
