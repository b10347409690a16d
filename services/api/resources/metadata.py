"""``/volumes/{volume_id}/metadata[/{key}]`` and the same of snapshots:
one pair of resources over the owner's operations (``metadata``,
``set_metadata``, ``delete_metadata``)."""

from collections.abc import Callable
from typing import Protocol

import falcon

from common import exception
from common.context import RequestContext
from services.api.resources import base
from services.api.schemas import metadata as schemas

#: The error for an unknown key of an owner (its id, the key).
Missing = Callable[[str, str], exception.AshlarException]


class Owner(Protocol):
    """What these resources use of the owner's operations (volumes' or
    snapshots'), whose id the route names."""

    def metadata(self, ctxt: RequestContext, owner_id: str, /
                 ) -> dict[str, str]: ...

    def set_metadata(self, ctxt: RequestContext, owner_id: str, /,
                     metadata: dict[str, str], replace: bool,
                     item: bool = False) -> dict[str, str]: ...

    def delete_metadata(self, ctxt: RequestContext, owner_id: str,
                        key: str, /) -> None: ...


def _owner(uri: dict) -> str:
    """The owner's id: the route's only field besides ``key``."""
    [owner_id] = [v for k, v in uri.items() if k != "key"]
    return owner_id


class Metadata:
    """The whole set: GET; POST merges keys in; PUT replaces it."""

    def __init__(self, ops: Owner) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               **uri: str) -> None:
        resp.media = {"metadata": self.ops.metadata(base.ctxt(req),
                                                    _owner(uri))}

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                **uri: str) -> None:
        self._set(req, resp, _owner(uri), replace=False)

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               **uri: str) -> None:
        self._set(req, resp, _owner(uri), replace=True)

    def _set(self, req: falcon.Request, resp: falcon.Response,
             owner_id: str, replace: bool) -> None:
        metadata = base.body(req, schemas.METADATA)["metadata"]
        resp.media = {"metadata": self.ops.set_metadata(
            base.ctxt(req), owner_id, metadata, replace)}


class MetadataItem:
    """One key: GET, PUT (the body's only key must be the URL's), DELETE."""

    def __init__(self, ops: Owner, missing: Missing) -> None:
        self.ops = ops
        self.missing = missing

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               key: str, **uri: str) -> None:
        owner_id = _owner(uri)
        metadata = self.ops.metadata(base.ctxt(req), owner_id)
        if key not in metadata:
            raise self.missing(owner_id, key)
        resp.media = {"meta": {key: metadata[key]}}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               key: str, **uri: str) -> None:
        meta = base.body(req, schemas.METADATA_ITEM)["meta"]
        if key not in meta:
            raise exception.Invalid("Request body and URI mismatch")
        self.ops.set_metadata(base.ctxt(req), _owner(uri), meta,
                              replace=False, item=True)
        resp.media = {"meta": meta}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  key: str, **uri: str) -> None:
        self.ops.delete_metadata(base.ctxt(req), _owner(uri), key)
        resp.content_type = falcon.MEDIA_JSON
        resp.data = b""
