"""The REST API: a falcon application speaking Cinder's Block Storage v3.

Falcon-free helpers live beside the app: ``microversion`` (the version list
and header), ``versions`` (the discovery document), ``faults`` (the error
envelope), ``validation`` and ``schemas/`` (request bodies and list query
parameters).
"""
