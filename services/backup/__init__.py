"""``ashlar-backup``: backs volumes up to, and restores them from, its
backup driver (``drivers/backup/``)."""
