"""UTC time stamps in the two forms the campaign files use."""

import datetime


def utc_stamp() -> str:
    """For file names (failed attempts, run logs): sorts by time, no colons, microseconds so two attempts
    of one process never collide, e.g. 20261122T101500.123456Z."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def utc_iso() -> str:
    """For fields a person reads (campaign created, job submitted): ISO 8601, e.g. 2026-11-22T10:15:00Z."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
