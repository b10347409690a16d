"""Policy defaults, one module per resource, Cinder's rule names."""

import itertools

from common.policies import attachments
from common.policies import backups
from common.policies import base
from common.policies import clusters
from common.policies import fencing
from common.policies import groups
from common.policies import manage
from common.policies import messages
from common.policies import qos
from common.policies import quotas
from common.policies import services
from common.policies import snapshots
from common.policies import transfers
from common.policies import types
from common.policies import volumes


def list_rules() -> list:
    """Return every default rule (oslo.policy.policies entry point)."""
    return list(itertools.chain(base.list_rules(), volumes.list_rules(),
                                types.list_rules(), attachments.list_rules(),
                                services.list_rules(), quotas.list_rules(),
                                snapshots.list_rules(),
                                fencing.list_rules(), messages.list_rules(),
                                transfers.list_rules(), qos.list_rules(),
                                groups.list_rules(), clusters.list_rules(),
                                backups.list_rules(), manage.list_rules()))
