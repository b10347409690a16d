"""Backup drivers: where a backup service keeps the bytes of backups."""
