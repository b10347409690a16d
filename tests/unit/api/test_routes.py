"""The wiring: routes.ROUTES names what each resource uses, app.OPERATIONS
how each operations object is built; both are checked here as tables, the
built app by the rest of the suite."""

import pathlib
import re

from services.api import app
from services.api import routes
from services.api.resources import base

#: A path literal (``"/v3/..."``) in a resource module.
PATH = re.compile(r"[\"']/v3")


def test_paths_are_unique():
    paths = [row.path for row in routes.ROUTES]
    assert len(paths) > 50
    assert len(set(paths)) == len(paths)


def test_every_route_uses_operations_or_settings():
    known = {name for name, *_row in app.OPERATIONS} | set(routes.SETTINGS)
    unknown = [(row.path, name) for row in routes.ROUTES
               for name in row.uses if name not in known]
    assert unknown == []


def test_operations_are_built_from_what_is_given_or_built_before():
    ready = set(app.GIVEN)
    for name, make, *uses in app.OPERATIONS:
        assert callable(make), name
        assert name not in ready, name
        assert set(uses) <= ready, (name, set(uses) - ready)
        ready.add(name)


def test_every_operations_object_is_used():
    used = {name for row in routes.ROUTES for name in row.uses}
    assert [name for name, *_row in app.OPERATIONS if name not in used] == []


def test_make_operations_builds_each_row(api):
    for name, make, *_uses in app.OPERATIONS:
        assert isinstance(getattr(api.ops, name), make), name


def test_operations_declares_each_row_as_its_class():
    """``app.Operations`` names each row's class for the type checker."""
    declared = {name: kind for name, kind
                in app.Operations.__annotations__.items()
                if name not in ("cache", "door")}
    assert declared == {name: make for name, make, *_uses in app.OPERATIONS}


def test_resource_modules_hold_no_paths():
    """Every path is in routes.py; resource modules hold classes."""
    folder = pathlib.Path(base.__file__).parent
    modules = sorted(folder.glob("*.py"))
    assert len(modules) > 10
    found = [module.name for module in modules
             if PATH.search(module.read_text())]
    assert found == []
