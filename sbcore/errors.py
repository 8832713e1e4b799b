"""The one exception type every scalebench command raises for bad input or an unusable environment.

The CLI turns it into a single line on stderr and a non-zero exit; anything else escaping is a bug.
"""


class ScalebenchError(Exception):
    """A user-facing error: the message names the file/option/key and the offending value."""

    exit_code = 1


class UsageError(ScalebenchError):
    """Bad command-line arguments or configuration (exit status 2, like argparse)."""

    exit_code = 2
