"""Volume backend drivers: the interface in ``base`` and one module per backend."""
