"""deploy/ashlar.conf.sample and deploy/policy.yaml.sample stay generated.

Regenerate with ``tox -e genconfig`` and ``tox -e genpolicy``.
"""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("tool, generator_conf, sample", [
    ("oslo_config.generator", "deploy/ashlar-config-generator.conf",
     "deploy/ashlar.conf.sample"),
    ("oslo_policy.generator", "deploy/ashlar-policy-generator.conf",
     "deploy/policy.yaml.sample"),
])
def test_sample_is_up_to_date(tmp_path, tool, generator_conf, sample):
    out = tmp_path / "sample"
    entry = ("from oslo_config.generator import main; main()"
             if tool == "oslo_config.generator" else
             "from oslo_policy.generator import generate_sample; "
             "generate_sample()")
    subprocess.run([sys.executable, "-c", entry, "--config-file",
                    generator_conf, "--output-file", str(out)],
                   cwd=REPO, check=True, capture_output=True, timeout=120)
    with open(os.path.join(REPO, sample)) as committed:
        assert out.read_text() == committed.read(), (
            "%s is stale: run tox -e %s" % (
                sample, "genconfig" if "config" in tool else "genpolicy"))
