"""postmortem: explain a finished MindSpore training run from the files it left on disk."""

__version__ = "0.1.0"
