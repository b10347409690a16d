"""The business layer behind the REST resources and the api's RPC door.

Operations check policy, validate against the database, make the
compare-and-swap status changes and cast to the other services.  Neither the
resources nor the RPC endpoint touch the database or the bus themselves.
"""
