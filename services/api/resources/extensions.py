"""``/extensions``: Ashlar's extensions, in Cinder's shape."""

import falcon

#: Each extension Ashlar adds to Cinder's API.
EXTENSIONS = [{
    "alias": "ashlar-fencing",
    "name": "Fencing",
    "namespace": "https://ashlar.invalid/ext/fencing/api/v1",
    "updated": "2026-11-25T00:00:00+00:00",
    "description": (
        "Fence an attachment (POST /attachments/{id}/action "
        "ashlar-fence, ashlar-unfence): the backend revokes its host's I/O "
        "to the volume before the call returns, and the host may only "
        "detach; take a volume over (ashlar-takeover): fence its other "
        "writers, then make the attachment read/write; fence a compute "
        "host (PUT /ashlar-fencing/fence|unfence). Backends that can "
        "report the fencing capability."),
    "links": [],
}]


class Extensions:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"extensions": EXTENSIONS}
