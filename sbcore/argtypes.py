"""argparse value types shared by every subcommand, so a bad number gets the same one-line message."""

import argparse


def int_at_least(minimum: int):
    """An argparse `type` accepting integers >= minimum: `--throttle: 0: must be >= 1`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value}: must be >= {minimum}")
        return value

    return parse
