"""What a service process leaves out of its start: modules that cost it
tens of milliseconds and that it needs late, or never."""

import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def _in_a_new_interpreter(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60,
                   cwd=REPO)


def test_only_a_pymysql_engine_imports_pymysql():
    """A process on mysqlclient, PostgreSQL or SQLite does without
    PyMySQL's import (about 25 ms)."""
    _in_a_new_interpreter(
        "import sys, sqlalchemy as sa\n"
        "from common.db.api import dialects\n"
        "from services.volume import launcher\n"
        "dialects.share_preferred_tls(sa.create_engine('sqlite://'))\n"
        "assert 'pymysql' not in sys.modules, 'imported'\n"
        "dialects.share_preferred_tls(sa.create_engine("
        "'mysql+pymysql://nobody@127.0.0.1/none'))\n"
        "assert 'pymysql' in sys.modules\n")


def test_a_volume_node_starts_without_oslo_utils_strutils():
    """strutils (about 40 ms of import) comes in only at the first
    ``<is>``; a volume node imports the extra-spec matcher for its
    reports."""
    _in_a_new_interpreter(
        "import sys\n"
        "from services.volume import launcher\n"
        "from common import extra_specs\n"
        "assert 'oslo_utils.strutils' not in sys.modules, 'imported'\n"
        "assert extra_specs.match_value(True, '<is> True')\n"
        "assert 'oslo_utils.strutils' in sys.modules\n")


def test_the_scheduler_s_warm_up_imports_what_the_first_is_spec_needs():
    """The scheduler's warm-up step (``warmup.match_once``): strutils comes
    in at start, not at the first placement of an ``<is>`` type."""
    _in_a_new_interpreter(
        "import sys\n"
        "from common import warmup\n"
        "assert 'oslo_utils.strutils' not in sys.modules, 'imported'\n"
        "warmup.match_once()\n"
        "assert 'oslo_utils.strutils' in sys.modules\n")
