"""The undo and restore offers are the job's (:mod:`kimi_compact_tui.job.offers`).

This name stays only while ``tui/screens/restore.py`` imports
:class:`RestoreOffer` from here; nothing else may use it.
"""

from kimi_compact_tui.job.offers import RestoreOffer

__all__ = ["RestoreOffer"]
