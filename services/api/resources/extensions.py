"""``/extensions``: Cinder's extensions that Ashlar serves under Cinder's
names, and Ashlar's own, in Cinder's shape."""

import falcon

#: Cinder's extensions that Ashlar serves, then each one Ashlar adds.
EXTENSIONS = [{
    "alias": "os-hosts",
    "name": "Hosts",
    "namespace": "https://docs.openstack.org/volume/ext/hosts/api/v1.1",
    "updated": "2011-06-29T00:00:00+00:00",
    "description": "Admin-only host administration.",
    "links": [],
}, {
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
