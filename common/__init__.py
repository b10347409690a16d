"""Ashlar's shared floor: config, RPC, database, context, policy, rules."""

import warnings

# NOTE(ashlar): oslo.service and oslo.messaging import eventlet, which
# prints a deprecation banner on import; Ashlar runs no eventlet code, and
# the banner buried every command's first screen (``ashlar --help``).
warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")
