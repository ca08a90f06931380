"""The history Claude Code resumes: which records, in which order.

The steps of its loader, on plain records (see :mod:`.records` for the facts):

1. transcript records by uuid (a later line with the same uuid replaces the
   record in place), ``progress`` records dropped and their children re-parented,
   the ``last-prompt`` leaf (reset by a compact boundary), the last transcript
   record that is not a sidechain;
2. the preserved segment of the last compact boundary re-linked after its anchor,
   and every record before that boundary dropped (only when some boundary carries
   preserved-segment metadata);
3. the leaf: the last record (or the ``last-prompt`` leaf it does not descend
   from), walked up to its nearest user/assistant record;
4. the chain from the leaf back to a null parent (a missing parent is replaced by
   the closest earlier record of the same kind of chain within 5 seconds);
   assistant records off the chain sharing a ``message.id`` with one on it (and
   their tool results) are pulled in after it; the attachments and system records
   hanging from the leaf follow it;
5. the history is the chain from its last compact boundary on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.formats.claude_code.records import Record
from kimi_compact_tui.formats.isotime import epoch_of

PARENT_FALLBACK_MS = 5000


@dataclass(frozen=True)
class Chain:
    """Indexes into the transcript's records, in history order."""

    records: tuple[int, ...]
    leaf: int | None  # the record the history ends at (its user/assistant leaf)
    cleared: bool = False  # the last turn cleared the history (/clear)


def _millis(stamp: str) -> float | None:
    seconds = epoch_of(stamp)
    return None if seconds is None else seconds * 1000


class _Loader:
    def __init__(self, records: tuple[Record, ...]) -> None:
        self.records = records
        self.by_uuid: dict[str, int] = {}  # uuid -> record index (insertion order kept)
        self.parent: dict[str, str | None] = {}
        self.last: str | None = None  # O: the last non-sidechain transcript record
        self.leaf_hint: str | None = None  # L: the last-prompt leaf
        self.explicit = False
        self.cleared = False
        self._scan()

    def _scan(self) -> None:
        progress: dict[str, str | None] = {}
        for index, rec in enumerate(self.records):
            kind, uuid = rec.kind, rec.uuid
            if kind == "progress" and uuid is not None:
                parent = rec.parent
                progress[uuid] = progress.get(parent) if parent in progress else parent
                continue
            if rec.is_transcript():
                parent = rec.parent
                if parent is not None and parent in progress:
                    parent = progress[parent]
                self.by_uuid[uuid] = index  # type: ignore[index]
                self.parent[uuid] = parent  # type: ignore[index]
                if not rec.sidechain:
                    self.last, self.explicit, self.cleared = uuid, False, False
                if rec.is_boundary():
                    self.leaf_hint, self.explicit = None, False
            elif kind == "last-prompt":
                leaf = rec.obj.get("leafUuid")
                if type(leaf) is str and leaf:
                    self.explicit = rec.obj.get("explicit") is True or (
                        self.explicit and leaf == self.leaf_hint
                    )
                    self.leaf_hint, self.cleared = leaf, False
                elif leaf is None and rec.obj.get("explicit") is True:
                    self.cleared, self.leaf_hint, self.explicit = True, None, False

    def rec(self, uuid: str | None) -> Record | None:
        index = self.by_uuid.get(uuid) if uuid is not None else None
        return self.records[index] if index is not None else None

    # --- step 2: the preserved segment -------------------------------------------------
    def relink(self) -> str | None:
        positions = {uuid: i for i, uuid in enumerate(self.by_uuid)}
        meta, meta_pos, last_boundary = None, -1, -1
        for uuid, pos in positions.items():
            rec = self.rec(uuid)
            if rec is not None and rec.is_boundary():
                last_boundary = pos
                found = rec.obj.get("compactMetadata")
                if type(found) is dict and (
                    found.get("preservedMessages") or found.get("preservedSegment")
                ):
                    meta, meta_pos = found, pos
        if meta is None:
            return None
        preserved = None
        if meta_pos == last_boundary:
            preserved = self._preserved(meta)
            if preserved is None:
                return None
        if preserved is not None and not preserved[1]:
            preserved = None
        if preserved is not None and any(u not in self.by_uuid for u in preserved[1]):
            return None
        kept = preserved[1] if preserved is not None else []
        if preserved is not None:
            anchor = preserved[0]
            prev = anchor
            for uuid in kept:
                self.parent[uuid] = prev
                prev = uuid
            for uuid, parent in list(self.parent.items()):
                if parent == anchor and uuid != kept[0]:
                    self.parent[uuid] = kept[-1]
        keep = set(kept)
        dropped = {u for u, pos in positions.items() if pos < last_boundary and u not in keep}
        for uuid in dropped:
            del self.by_uuid[uuid]
            del self.parent[uuid]
        if preserved is not None and dropped:
            for uuid, parent in list(self.parent.items()):
                rec = self.rec(uuid)
                if rec is not None and rec.kind in ("user", "assistant") and parent in dropped:
                    self.parent[uuid] = kept[-1]
        return kept[-1] if kept else None

    def _preserved(self, meta: dict[str, Any]) -> tuple[Any, list[str]] | None:
        listed = meta.get("preservedMessages")
        if listed:
            uuids = listed.get("uuids") if type(listed) is dict else None
            uuids = [u for u in uuids if type(u) is str] if type(uuids) is list else []
            return (listed.get("anchorUuid") if type(listed) is dict else None), uuids
        segment = meta.get("preservedSegment")
        if type(segment) is not dict:
            return None
        seen: set[str] = set()
        walked: list[str] = []
        uuid = segment.get("tailUuid")
        while uuid in self.by_uuid and uuid not in seen:
            seen.add(uuid)
            walked.append(uuid)
            if uuid == segment.get("headUuid"):
                walked.reverse()
                return segment.get("anchorUuid"), walked
            uuid = self.parent.get(uuid)
        return None

    # --- step 3: the leaf --------------------------------------------------------------
    def _up_to_message(self, uuid: str | None) -> str | None:
        seen: set[str] = set()
        while uuid is not None and uuid in self.by_uuid and uuid not in seen:
            seen.add(uuid)
            if self.rec(uuid).kind in ("user", "assistant"):  # type: ignore[union-attr]
                return uuid
            uuid = self.parent.get(uuid)
        return None

    def leaves(self, relinked: str | None) -> set[str]:
        if self.cleared:
            return set()
        hint = self.leaf_hint if self.leaf_hint in self.by_uuid else None
        pinned = self.explicit and hint is not None and not self.rec(hint).sidechain  # type: ignore[union-attr]
        if relinked is None or pinned:
            start = hint
            if start is not None and not self.explicit and self.last in self.by_uuid:
                if self.last != start and self._descends(self.last, start):
                    start = self.last
            if relinked is None and start is None:
                start = self.last
            found = self._up_to_message(start)
            if found is not None:
                return {found}
        parents, message_parents = set(), set()
        for uuid, parent in self.parent.items():
            if parent is not None:
                parents.add(parent)
                if self.rec(uuid).kind in ("user", "assistant"):  # type: ignore[union-attr]
                    message_parents.add(parent)
        found_leaves: set[str] = set()
        for uuid in self.by_uuid:
            if uuid in parents:
                continue
            top = self._up_to_message(uuid)
            if top is not None and top not in message_parents:
                found_leaves.add(top)
        if len(found_leaves) > 1:
            start = hint if hint in found_leaves else self.last
            top = self._up_to_message(start)
            if top is not None:
                return {top}
        return found_leaves

    def _descends(self, uuid: str | None, ancestor: str) -> bool:
        seen: set[str] = set()
        while uuid is not None and uuid not in seen:
            if uuid == ancestor:
                return True
            seen.add(uuid)
            uuid = self.parent.get(uuid)
        return False

    def pick(self, leaves: set[str]) -> str | None:
        """The resumed leaf: the latest (by timestamp) main-chain user/assistant leaf."""

        def latest(test: Callable[[str, Any], bool]) -> str | None:
            best, best_ms = None, float("-inf")
            for uuid in self.by_uuid:
                rec = self.rec(uuid)
                ms = _millis(rec.timestamp) if test(uuid, rec) else None  # type: ignore[union-attr]
                if ms is not None and ms > best_ms:
                    best, best_ms = uuid, ms
            return best

        found = latest(
            lambda u, r: u in leaves and not r.sidechain and r.kind in ("user", "assistant")
        )
        if found is None and not leaves and not self.cleared:
            found = latest(lambda u, r: not r.sidechain)
        return found

    # --- step 4: the chain -------------------------------------------------------------
    def walk(self, leaf: str) -> list[str]:
        chain: list[str] = []
        seen: set[str] = set()
        uuid: str | None = leaf
        while uuid is not None:
            if uuid in seen:
                break
            seen.add(uuid)
            chain.append(uuid)
            parent = self.parent.get(uuid)
            if parent is None:
                break
            if parent not in self.by_uuid or parent in seen:
                parent = self._fallback_parent(uuid, seen)
            uuid = parent
        chain.reverse()
        chain = self._recover_same_message(chain, seen)
        return self._trailing(leaf, chain, seen)

    def _fallback_parent(self, uuid: str, seen: set[str]) -> str | None:
        rec = self.rec(uuid)
        at = _millis(rec.timestamp) if rec is not None else None
        if at is None:
            return None
        best, best_gap = None, float("inf")
        for other in self.by_uuid:
            candidate = self.rec(other)
            if other in seen or candidate.sidechain != rec.sidechain:  # type: ignore[union-attr]
                continue
            ms = _millis(candidate.timestamp)  # type: ignore[union-attr]
            if ms is None:
                continue
            gap = at - ms
            if 0 <= gap <= PARENT_FALLBACK_MS and gap < best_gap:
                best, best_gap = other, gap
        return best

    def _recover_same_message(self, chain: list[str], seen: set[str]) -> list[str]:
        on_chain = [u for u in chain if self.rec(u).kind == "assistant"]  # type: ignore[union-attr]
        if not on_chain:
            return chain
        anchor: dict[str, str] = {}  # message.id -> its last record on the chain
        for uuid in on_chain:
            mid = self.rec(uuid).message.get("id")  # type: ignore[union-attr]
            if mid:
                anchor[mid] = uuid
        by_id: dict[str, list[str]] = {}
        results: dict[str, list[str]] = {}
        for uuid, index in self.by_uuid.items():
            rec = self.records[index]
            mid = rec.message.get("id") if rec.kind == "assistant" else None
            if mid:
                by_id.setdefault(mid, []).append(uuid)
            elif rec.kind == "user" and _has_tool_result(rec):
                parent = self.parent.get(uuid)
                if parent:
                    results.setdefault(parent, []).append(uuid)
        inserted: dict[str, list[str]] = {}
        done: set[str] = set()
        for uuid in on_chain:
            mid = self.rec(uuid).message.get("id")  # type: ignore[union-attr]
            if not mid or mid in done:
                continue
            done.add(mid)
            group = by_id.get(mid, [uuid])
            extra = [u for u in group if u not in seen]
            extra_results = [r for u in group for r in results.get(u, []) if r not in seen]
            if not extra and not extra_results:
                continue

            def stamp(u: str) -> str:
                return self.rec(u).timestamp  # type: ignore[union-attr]

            pulled = sorted(extra, key=stamp) + sorted(extra_results, key=stamp)
            seen.update(pulled)
            inserted[anchor[mid]] = pulled
        if not inserted:
            return chain
        out: list[str] = []
        for uuid in chain:
            out.append(uuid)
            out.extend(inserted.get(uuid, []))
        return out

    def _trailing(self, leaf: str, chain: list[str], seen: set[str]) -> list[str]:
        children: dict[str, list[str]] = {}
        for uuid, parent in self.parent.items():
            if parent and self.rec(uuid).kind not in ("user", "assistant"):  # type: ignore[union-attr]
                children.setdefault(parent, []).append(uuid)
        found: list[str] = []
        queue = deque([leaf])
        while queue:
            for child in children.get(queue.popleft(), []):
                if child in seen:
                    continue
                seen.add(child)
                found.append(child)
                queue.append(child)
        found.sort(key=lambda u: self.rec(u).timestamp)  # type: ignore[union-attr]
        return chain + found


def _has_tool_result(rec: Record) -> bool:
    content = rec.message.get("content")
    return type(content) is list and any(
        type(b) is dict and b.get("type") == "tool_result" for b in content
    )


def resume_chain(records: tuple[Record, ...]) -> Chain:
    """The records Claude Code sends on resume, from the last compact boundary on."""
    loader = _Loader(records)
    relinked = loader.relink()
    leaf = loader.pick(loader.leaves(relinked))
    if leaf is None:
        return Chain((), None, loader.cleared)
    uuids = loader.walk(leaf)
    indexes = [loader.by_uuid[u] for u in uuids]
    last_boundary = max(
        (i for i, index in enumerate(indexes) if records[index].is_boundary()), default=0
    )
    return Chain(tuple(indexes[last_boundary:]), loader.by_uuid[leaf], loader.cleared)
