"""Allow ``python -m sklearn_topicfac`` to run the Classic3 demo."""

from sklearn_topicfac.cli import main

# Guarded so that importing this module (e.g. by pytest --doctest-modules over
# the whole package) does not run the demo.
if __name__ == "__main__":
    raise SystemExit(main())
