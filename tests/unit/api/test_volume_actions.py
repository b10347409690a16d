"""The volume actions of microversions 3.68-3.71 that Ashlar refuses, and
how (Cinder's fault format, the volume left as it was)."""

import uuid

try:
    from tests.unit.api import apitest
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest


def test_reimage_needs_3_68_and_is_refused_without_images(api):
    vid = api.volume()
    body = {"os-reimage": {"image_id": str(uuid.uuid4())}}
    assert api.action(vid, body).status_code == 404  # not at 3.60
    resp = api.action(vid, body, version="volume 3.68")
    assert resp.status_code == 400
    assert "Re-imaging a volume (os-reimage) is not supported" in \
        apitest.message(resp)
    assert api.show_volume(vid)["status"] == "available"


def test_extend_completion_needs_3_71_and_no_extend_waits_for_it(api):
    vid = api.volume()
    body = {"os-extend_volume_completion": {"error": False}}
    assert api.action(vid, body, version="volume 3.70").status_code == 404
    resp = api.action(vid, body, version="volume 3.71")
    assert resp.status_code == 400
    assert "not waiting for a compute host" in apitest.message(resp)
    resp = api.action(str(uuid.uuid4()), body, version="volume 3.71")
    assert resp.status_code == 404
