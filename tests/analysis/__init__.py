"""Tests of the analysis package (issue 6), on synthetic campaigns with known ground truth."""
