"""REST resources: parse, authorize, call an operation, serialize."""
