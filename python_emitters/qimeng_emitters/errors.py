"""The one exception type the emitters raise for a bad request."""


class RequestError(Exception):
    """A request the emitter cannot serve; the message says why."""
