"""Every Ashlar option, registered in one place.

oslo.messaging reads some option groups only from the global ``cfg.CONF``
(see ``common/rpc.py``), so the processes use ``CONF`` below; library code
takes a ``conf`` argument so tests can hand in a fresh ``ConfigOpts``.
"""

from oslo_config import cfg

from common.conf import agent
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

CONF = cfg.CONF

_MODULES = (default, agent, api, attachments, backup, coordination, database, quota,
            scheduler, upgrade_levels, volume)


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every group of options on ``conf`` (idempotent)."""
    for module in _MODULES:
        module.register_opts(conf)


register_opts(CONF)
