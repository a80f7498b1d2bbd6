"""Optional dependencies, imported when a function needs them."""


def pyplot():
    """``matplotlib.pyplot``, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Plotting needs matplotlib: pip install matplotlib "
            '(or pip install "sklearn-topicfac[plot]").'
        ) from exc
    return plt
