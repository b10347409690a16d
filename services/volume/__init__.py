"""ashlar-volume: one manager per backend, capability reports, connections."""
