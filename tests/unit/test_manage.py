"""``ashlar-manage user set|delete``: http_basic users an htpasswd file
holds, which oslo.middleware's basic-auth functions then accept."""

import io
import os

import pytest
import webob.exc
from oslo_middleware import basic_auth

from common import conf as ashlar_conf
from services import manage


@pytest.fixture
def user_file(tmp_path, monkeypatch):
    path = tmp_path / "auth" / "htpasswd"
    conf_file = tmp_path / "ashlar.conf"
    conf_file.write_text("[http_basic]\nuser_file = %s\n" % path)
    monkeypatch.setattr(manage, "BCRYPT_ROUNDS", 4)
    yield path, conf_file
    ashlar_conf.CONF.reset()
    ashlar_conf.CONF.clear()


def _run(conf_file, *args, password=None, monkeypatch=None):
    if password is not None:
        monkeypatch.setenv(manage.PASSWORD_ENV, password)
    out = io.StringIO()
    app = manage.ManageApp()
    app.stdout = out
    code = app.run(["--config-file", str(conf_file), *args])
    return code, out.getvalue()


def _accepts(path, user, password):
    try:
        basic_auth.authenticate(str(path), user, password.encode())
    except webob.exc.HTTPUnauthorized:
        return False
    return True


def test_set_change_and_delete_a_user(user_file, monkeypatch):
    path, conf_file = user_file
    assert _run(conf_file, "user", "set", "operator", password="one",
                monkeypatch=monkeypatch)[0] == 0
    assert _run(conf_file, "user", "set", "ashlar-agent-c1", password="two",
                monkeypatch=monkeypatch)[0] == 0
    assert oct(os.stat(path).st_mode & 0o777) == "0o640"
    assert _accepts(path, "operator", "one")
    assert _accepts(path, "ashlar-agent-c1", "two")
    _run(conf_file, "user", "set", "operator", password="three",
         monkeypatch=monkeypatch)
    assert not _accepts(path, "operator", "one")
    assert _accepts(path, "operator", "three")
    basic_auth.validate_auth_file(str(path))
    assert _run(conf_file, "user", "delete", "operator")[0] == 0
    assert not _accepts(path, "operator", "three")
    assert _accepts(path, "ashlar-agent-c1", "two")
    assert _run(conf_file, "user", "delete", "operator")[0] != 0


def test_if_missing_keeps_an_existing_password(user_file, monkeypatch):
    path, conf_file = user_file
    _run(conf_file, "user", "set", "operator", password="first",
         monkeypatch=monkeypatch)
    code, out = _run(conf_file, "user", "set", "--if-missing", "operator",
                     password="second", monkeypatch=monkeypatch)
    assert code == 0 and "left as it is" in out
    assert _accepts(path, "operator", "first")


@pytest.mark.parametrize("name", ["a:b", " "])
def test_bad_names_and_empty_passwords_are_refused(user_file, monkeypatch,
                                                   name):
    path, conf_file = user_file
    assert _run(conf_file, "user", "set", name, password="x",
                monkeypatch=monkeypatch)[0] != 0
    assert _run(conf_file, "user", "set", "ok", password="",
                monkeypatch=monkeypatch)[0] != 0
    assert not path.exists()
