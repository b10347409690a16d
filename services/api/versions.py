"""The version discovery document served at ``/``, ``/v3`` and ``/v3/``.

Body and key order are Cinder's (openstack/cinder ``cinder/api/versions.py``,
``cinder/api/views/versions.py``); clients read ``version`` and
``min_version`` from the first entry whose ``version`` contains ``3.``.
"""

import re

from services.api import microversion

#: When VERSIONS last grew; clients only display it.
UPDATED = "2026-11-21T00:00:00Z"

_TRAILING_VERSION = re.compile(r"/v[1-9]+/?$")


def versions_document(base_url: str,
                      public_endpoint: str | None = None
                      ) -> dict[str, object]:
    """Build the ``{"versions": [...]}`` body.

    The ``self`` link is the base with any trailing ``/vN`` removed and
    ``/v3/`` appended, so ``http://h:8776`` and ``http://h:8776/v3/`` both
    give ``http://h:8776/v3/``.

    NOTE: Cinder joins with ``urljoin``, which drops a path prefix written
    without a trailing slash (``http://h/volume`` gives ``http://h/v3/``);
    Ashlar keeps the prefix.

    :param base_url: scheme, host, port and mount point of the request, as
        falcon's ``req.prefix``; a trailing ``/v3`` is allowed.
    :param public_endpoint: the configured public URL; it replaces
        ``base_url`` when set, for deployments behind a proxy.
    """
    base = _TRAILING_VERSION.sub("", public_endpoint or base_url).rstrip("/")
    return {"versions": [{
        "id": "v3.0",
        "status": "CURRENT",
        "version": str(microversion.MAX_VERSION),
        "min_version": str(microversion.MIN_VERSION),
        "updated": UPDATED,
        "links": [
            {"rel": "describedby", "type": "text/html",
             "href": "https://docs.openstack.org/"},
            {"rel": "self", "href": f"{base}/v3/"},
        ],
        "media-types": [{
            "base": "application/json",
            "type": "application/vnd.openstack.volume+json;version=3",
        }],
    }]}
