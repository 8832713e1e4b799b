"""Tests of the analysis package, on synthetic campaigns with known ground truth."""
