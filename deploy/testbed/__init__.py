"""Real deployments of Ashlar for the functional tests and the benchmarks.

Both import it, and neither imports the other's modules, so a benchmark
measures the deployment the tests check:

- ``harness``: broker vhosts, fresh databases, Ashlar's processes
  (``Deployment``), a small Cinder v3 client, ``wait_for``;
- ``components``: the third-party services some of them need (Keystone,
  Ceph, mysqlclient, docker-compose, RabbitMQ users, network namespaces),
  installed with ``python -m deploy.testbed.components.NAME install``;
- ``failover_story``: hosts holding a shared volume through
  ``ashlar-agent hold``, and a takeover between them.

It runs from the repository's root (``pytest``, ``python -m benchmarks.X``)
and is not part of the installed package (``setup.cfg`` installs
``common``, ``services`` and ``drivers``).
"""
