"""The database API: one module per table family, on shared plumbing.

Callers import a family module (``from common.db.api import volumes as
volumes_db``) and each shared name from the module that holds it.

Table families (functions of a ``RequestContext``):

- ``volumes`` (volumes and their metadata), ``metadata`` (merging,
  replacing and removing the keys of volumes and snapshots), ``sources``
  (a create holds its source; a delete waits for what is made from it),
  ``transfers``;
- ``attachments`` (a package: attachments, their connector rows and the
  volume status they drive), ``fencing`` (fenced rows, the writer grant);
- ``snapshots``, ``groups``, ``group_snapshots``, ``group_types``;
- ``types`` (volume types, extra specs, access), ``qos``, ``quotas``,
  ``services``, ``messages``.

Shared plumbing:

- ``engine``: the transaction context (``reader``, ``writer``,
  ``retry_on_deadlock``), ``configure`` and the engines
  (``get_engine``, ``autocommit_engine``);
- ``dialects``: what each database's engines are tuned with (SQLite's
  pragmas and ``BEGIN IMMEDIATE``, no pre-ping of a connection good just now,
  MySQL's READ COMMITTED); ``pymysql_tls``: PyMySQL's shared TLS context;
- ``execution``: the ways SQL runs, and why each remains (the ORM
  session, Core in a transaction, prebuilt statements in a transaction on
  the driver's cursor with ``transaction``, one statement with no
  transaction of its own with ``single_statement``), ``Record``, and the
  types of what they are given (``Conn``, ``SessionOrConnection``);
- ``rows``: the shapes of the rows read with Core that family functions
  return (``VolumeRow``, ``AttachmentRow``, ...), for type checkers;
- ``direct``: prebuilt statements run as plans on the driver's cursor;
- ``cas``: compare-and-swap of one row (``conditional_update``,
  ``compare_and_swap``);
- ``paging``: one page of an ORM list (``page``, ``project_page``);
- ``timestamps``: ``utcnow`` and ``older_than`` (naive UTC).
"""
