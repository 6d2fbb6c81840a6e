"""A hard time limit for property tests: a hypothesis deadline cannot interrupt a stuck call."""

import contextlib
import signal


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise ``TimeoutError`` in the block after ``seconds`` (where SIGALRM exists)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def timed_out(signum, frame):
        raise TimeoutError(f"ran over {seconds} s")

    previous = signal.signal(signal.SIGALRM, timed_out)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
