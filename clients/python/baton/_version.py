"""The client's version, in a module of its own so that every part can read it without importing
the package (whose ``__init__`` imports every part)."""
__version__ = "1.2.0.dev0"
