"""The frame every modal dialog shares, as CSS: the screen centres one
``Vertical`` framed by a thick border on the panel colour. Each screen names
itself, its border colour and its size; :func:`dialog_css` adds the look of a
small question (a bold title, a body, a row of buttons)."""

from __future__ import annotations


def frame_css(
    name: str,
    border: str,
    *,
    width: str = "90%",
    max_width: str = "110",
    height: str = "auto",
    padding: str = "1 2",
) -> str:
    """The CSS of the modal screen class ``name``: centred, its ``Vertical``
    ``width`` wide (at most ``max_width``) and ``height`` high, in a thick
    ``border`` (a colour variable such as ``$warning``)."""
    return f"""
    {name} {{ align: center middle; }}
    {name} > Vertical {{
        width: {width}; max-width: {max_width}; height: {height};
        border: thick {border}; background: $panel; padding: {padding};
    }}
    """


def dialog_css(name: str, border: str, *, width: str = "90%", max_width: str = "110") -> str:
    """:func:`frame_css`, with a bold ``.dialog-title``, a ``.dialog-body`` and a
    row of buttons."""
    return frame_css(name, border, width=width, max_width=max_width) + f"""
    {name} .dialog-title {{ text-style: bold; }}
    {name} .dialog-body {{ margin: 1 0; }}
    {name} Horizontal {{ height: auto; }}
    {name} Button {{ margin-right: 2; }}
    """
