"""The package's version, in a module of its own so every floor can read it."""

__version__ = "0.1.0.dev0"
