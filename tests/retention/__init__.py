"""Retention: the specifics a summary keeps and loses, anchors and candidates."""
