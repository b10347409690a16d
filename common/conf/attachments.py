"""[DEFAULT] options of attachments: limits, the stuck-transition check and
agents' leases."""

from oslo_config import cfg

opts = [
    cfg.IntOpt("max_attachments_per_volume", default=128, min=1,
               help="Most attachments (of any status) a multiattach volume "
                    "may have at once. A volume type overrides it with the "
                    "extra spec ashlar:max_attachments=<n>. A volume that "
                    "is not multiattach takes one."),
    cfg.IntOpt("attachment_transition_timeout", default=120, min=1,
               help="Seconds an attachment may stay in flight (being "
                    "connected or disconnected by a volume service) before "
                    "that volume service resolves it as stuck: it "
                    "terminates the backend connection, then rolls a "
                    "connect back or finishes a delete. Keep it above "
                    "rpc_call_timeout."),
    cfg.IntOpt("attachment_check_interval", default=60, min=1,
               help="Seconds between two checks for stuck attachments in "
                    "each volume service (also run at its start)."),
    cfg.IntOpt("agent_attachment_lease", default=600, min=0,
               help="Seconds a compute agent has to complete (os-complete) "
                    "an attachment it created or connected through the RPC "
                    "door. When the lease lapses, the agent is taken to "
                    "have vanished (crashed, or its call timed out and it "
                    "never learnt the attachment's id): the volume service "
                    "terminates the connection and removes the attachment. "
                    "Each door call that connects the attachment renews "
                    "the lease. A REST create with a connector whose "
                    "connect the volume service did not answer in time "
                    "gets the same lease (its client never learnt the "
                    "id); other attachments made over REST are never "
                    "reaped (a shelved server keeps its reservations), "
                    "but one left attaching (connected, never completed) "
                    "this long is completed: a host may use it. "
                    "0: never."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)


def list_opts() -> list:
    return [("DEFAULT", opts)]
