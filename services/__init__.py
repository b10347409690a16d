"""Ashlar's processes: api, scheduler, volume (and the embedded all-in-one)."""
