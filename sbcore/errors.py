"""The exceptions every scalebench command raises for bad input or an unusable environment, each with the
exit status it ends the command with. The table (docs/exit-codes.md) is declared here and nowhere else:

    0  ok
    1  a finding: an incomplete campaign (status), a regression, an analyze --fail-on finding
    2  bad input or usage: a command line, configuration or file that cannot be used as given
    3  the environment or a tool failed: a missing or failing tool, a full disk, a lock held elsewhere

The CLI turns each into a single line on stderr and its exit status; anything else escaping is a bug.
"""

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3


class ScalebenchError(Exception):
    """A user-facing error: the message names the file/option/key and the offending value."""

    exit_code = EXIT_ENVIRONMENT


class UsageError(ScalebenchError):
    """Bad command-line arguments, configuration or input files (exit status 2, like argparse)."""

    exit_code = EXIT_USAGE


class EnvironmentProblem(ScalebenchError):
    """The machine, a tool or the file system failed (exit status 3)."""

    exit_code = EXIT_ENVIRONMENT
