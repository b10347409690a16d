"""common.db.api.engine.with_charset: MySQL and MariaDB connections in
utf8mb4 (a character beyond the BMP fits), unless the URL says otherwise."""

import pytest

from common.db.api import engine


@pytest.mark.parametrize(("url", "expected"), [
    ("mysql+pymysql://u:p%40ss@db/ashlar",
     "mysql+pymysql://u:p%40ss@db/ashlar?charset=utf8mb4"),
    ("mysql+mysqldb://u@db/ashlar?ssl_mode=REQUIRED",
     "mysql+mysqldb://u@db/ashlar?charset=utf8mb4&ssl_mode=REQUIRED"),
    ("mysql+pymysql://u@db/ashlar?charset=utf8",
     "mysql+pymysql://u@db/ashlar?charset=utf8"),
    ("postgresql+psycopg://u@db/ashlar", "postgresql+psycopg://u@db/ashlar"),
    ("sqlite:////tmp/a.sqlite", "sqlite:////tmp/a.sqlite"),
])
def test_with_charset(url, expected):
    assert engine.with_charset(url) == expected
