"""Synthetic campaigns (tests/synthetic_campaigns.py) with known ground truth, analysed once per session."""

import pytest

from analysis.outputs.plots import all_plots
from analysis.outputs.report.render import write_report
from analysis.pipeline import Options, analyze, write_tables
from tests.synthetic_campaigns import plant_corrupt_files, standard_campaign

# Modest resampling keeps the suite fast; no assertion depends on the exact number.
TEST_RESAMPLES = 400


@pytest.fixture(scope="session")
def standard(tmp_path_factory):
    """(ground truth, analysis) of the standard synthetic campaign with corrupt files planted."""
    truth = standard_campaign(tmp_path_factory.mktemp("results"), seed=3)
    plant_corrupt_files(truth)
    result = analyze(truth.campaign_dir, Options(n_resamples=TEST_RESAMPLES, seed=1))
    return truth, result


@pytest.fixture(scope="session")
def rendered(standard):
    """The standard campaign with tables, plots and both reports written."""
    truth, result = standard
    write_tables(result)
    plots = all_plots(result)
    written = write_report(result, plots, ("md", "html", "csv"))
    return truth, result, plots, written
