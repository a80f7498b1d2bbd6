"""A module whose class runs code when a model file holding it is loaded:
``__setstate__`` (skops, pickle) or ``__reduce__`` (pickle) writes a marker
file.  Tests write it as ``payload_module.py`` on ``sys.path``."""

PAYLOAD_MODULE = """
class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __getstate__(self):
        return {"marker": self.marker}

    def __setstate__(self, state):
        open(state["marker"], "w").write("ran")

    def __reduce__(self):
        return (open, (self.marker, "w"))
"""
