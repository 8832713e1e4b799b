"""Tests of the C kernels and their harness."""
