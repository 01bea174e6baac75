"""The reading pool (find/pool.py): work started before its results are wanted, finished by a
real pool of processes and this one together, comes back whole and in order."""

from __future__ import annotations

from exportlens.exporter.find.pool import SERIAL_BELOW, working
from exportlens.exporter.find.prefilter import sketch


def _texts(n: int, stem: str) -> list[str]:
    return [f"from torch import nn\n\nclass {stem}{i}(nn.Module):\n    pass\n" for i in range(n)]


def test_two_batches_started_then_finished_come_back_in_order_by_two_processes():
    first, second = _texts(SERIAL_BELOW * 2, "First"), _texts(SERIAL_BELOW + 3, "Second")
    with working(2, len(first) + len(second)) as work:
        early = work.start(sketch, first)  # the pool begins while this process does other work
        later = work.start(sketch, second)
        work.finish()
    assert early == [sketch(t) for t in first]
    assert later == [sketch(t) for t in second]
    assert [s.classes[0][0] for s in later[:2]] == ["Second0", "Second1"]


def test_a_small_batch_is_read_in_this_process_as_it_is_started():
    texts = _texts(3, "Small")
    with working(2, len(texts)) as work:
        results = work.start(sketch, texts)
        assert results == [sketch(t) for t in texts]  # no pool: done before finish
        work.finish()
