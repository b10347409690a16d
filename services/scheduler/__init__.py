"""ashlar-scheduler: capability store, filters, weighers, placement."""
