"""Ashlar's processes: api, scheduler, volume (and the embedded all-in-one)."""

import os

# NOTE(ashlar): oslo.messaging imports oslo.service, which imports eventlet,
# which imports dnspython for green DNS: about a third of a volume node's
# start (so of how soon a new backend is seen).  Ashlar never monkey-patches,
# so green DNS is never used.  Set before anything imports eventlet.
os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")
