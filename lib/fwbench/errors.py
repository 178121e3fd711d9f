"""User-facing errors: one line that names the problem and the fix."""


class FwbenchError(Exception):
    """An error caused by the user's input or environment, shown as one line without a traceback."""


class DataUnavailable(FwbenchError):
    """A dataset could not be found, downloaded or verified."""
