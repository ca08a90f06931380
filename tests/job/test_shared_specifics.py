"""One extraction of a range serves every reader of it: the offline summary,
each retention score (the summary, an edit, the pins), and the probe read the
items a preparation made once, and score exactly as a fresh extraction would."""

from __future__ import annotations

import threading

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers.offline import offline_summary
from kimi_compact_tui.retention import retention_report
from tests.factories import write_openai_json
from tests.job.test_job_path import ENABLED, MESSAGES


def prepared(tmp_path):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(path, AppConfig(raw=ENABLED), for_write=False)
    return job, job.prepare()


def test_the_request_and_every_score_read_the_items_made_once(tmp_path):
    job, prep = prepared(tmp_path)
    assert not prep.plan.noop and prep.request is not None
    items = prep.specifics()
    assert prep.specifics() is items
    assert prep.request.specifics is not None and prep.request.specifics() is items


def test_a_score_from_the_shared_items_is_the_score_of_a_fresh_extraction(tmp_path):
    job, prep = prepared(tmp_path)
    summary = offline_summary(prep.request)
    for text in (summary, summary[: len(summary) // 2], "Nothing was kept."):
        shared = prep.retention(text).to_json()
        fresh = retention_report(job.session, prep.plan, text).to_json()
        assert shared == fresh


def test_workers_asking_at_once_get_one_set_of_items(tmp_path):
    job, prep = prepared(tmp_path)
    got: list[object] = []
    start = threading.Barrier(4)

    def ask() -> None:
        start.wait()
        got.append(prep.specifics())

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(g is got[0] for g in got)


def test_another_boundary_is_another_range_with_its_own_items(tmp_path):
    job, prep = prepared(tmp_path)
    other = job.prepare(up_to=2)
    assert other.plan.compact_indices != prep.plan.compact_indices
    assert other.specifics() is not prep.specifics()
    assert other.specifics() is other.specifics()
