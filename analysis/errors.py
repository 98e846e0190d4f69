"""Errors the analysis raises on input it cannot trust."""


class AnalysisInputError(ValueError):
    """An input file is unreadable, truncated or malformed; the message names the file
    and where (byte offset, frame or line)."""


class CaptureError(AnalysisInputError):
    """A pcap/pcapng capture could not be read completely."""


class LogFormatError(AnalysisInputError):
    """An emulator event log does not follow emulator/LOG_FORMAT.md."""
