"""ashlar-agent: the compute-host side of attachments (os-brick over RPC)."""
