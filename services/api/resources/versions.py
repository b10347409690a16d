"""``/``, ``/v3``, ``/v3/`` and ``/openapi.yaml``: discovery, without auth."""

import falcon

from services.api import openapi
from services.api import versions


class Versions:
    def __init__(self, status: str = falcon.HTTP_300) -> None:
        self.status = status

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.status = self.status
        resp.media = versions.versions_document(req.prefix)

    on_head = on_get


class OpenAPI:
    """``GET /openapi.yaml``: the document describing this API."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = openapi.MEDIA_TYPE
        resp.text = openapi.read_text()
