"""Finding a campaign and the cores of its node types, from files alone."""

import json

import pandas as pd
import pytest

from analysis.campaign import cores_of, read_campaign
from sbcore.errors import ScalebenchError, UsageError
from sbcore.layout import resolve_campaign
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


def test_resolve_by_path_name_and_latest(tmp_path):
    truth = write_campaign(
        tmp_path, "c1", [CaseSpec("n", "mcpi", "c", "serial", 1, reps=2)], [NodeTypeSpec("n", 4)]
    )
    (tmp_path / "latest").symlink_to("c1")
    for spec in (str(truth.campaign_dir), "c1", "latest"):
        assert resolve_campaign(spec, tmp_path) == truth.campaign_dir.resolve()
    with pytest.raises(UsageError, match="'c2'"):
        resolve_campaign("c2", tmp_path)
    (tmp_path / "plain").mkdir()
    with pytest.raises(ScalebenchError, match="not a campaign directory"):
        resolve_campaign("plain", tmp_path)


def test_cores_come_from_the_probed_host_first_then_manifest(tmp_path):
    truth = write_campaign(
        tmp_path, "c1", [CaseSpec("n", "mcpi", "c", "omp", 2, reps=2)], [NodeTypeSpec("n", 4)]
    )
    campaign = read_campaign(truth.campaign_dir)
    records = pd.DataFrame({"node_type": ["n"], "hostname": ["node7"], "pin_cpus": ["0,1"]})
    assert cores_of("n", campaign, records) == (4, "manifest.json")
    (truth.campaign_dir / "hosts").mkdir()
    (truth.campaign_dir / "hosts" / "node7.json").write_text(
        json.dumps({"topology": {"sockets": 2, "cores": 12}})
    )
    assert cores_of("n", campaign, records) == (4, "manifest.json")  # read with the campaign
    campaign = read_campaign(truth.campaign_dir)
    assert cores_of("n", campaign, records) == (12, "hosts/node7.json")
    campaign.manifest, campaign.config = {}, {}
    assert cores_of("other", campaign, records.assign(node_type="other", hostname=None)) == (
        2,
        "CPUs seen in records (hardware threads)",
    )
