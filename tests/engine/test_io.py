"""Subscribers (``operators/io.py``): each epoch's updates with their true times, delivered
to every subscriber whatever one of them does."""
from __future__ import annotations

import pytest

import ddlab
from ddlab import SubscriberError


def test_subscribe_receives_each_epochs_updates():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    got = []
    x.count().subscribe(got.append)
    x.insert([(1, 1), (1, 2)])
    flow.step()
    x.remove([(1, 2)])
    flow.step()
    assert sorted(got[0]) == [((1, 2), (0,), 1)]
    assert sorted(got[1]) == [((1, 1), (1,), 1), ((1, 2), (1,), -1)]



def test_failing_subscriber_does_not_corrupt_the_others():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    seen_a, seen_c = [], []
    x.subscribe(seen_a.append, name="first")

    def bad(updates):
        raise RuntimeError("display broke")

    x.subscribe(bad, name="broken")
    x.subscribe(seen_c.append, name="third")
    view = x.view()
    x.insert([1])
    with pytest.raises(SubscriberError, match=r"subscriber broken#\d+ raised RuntimeError: "
                                              r"display broke while receiving epoch 0\. The "
                                              r"epoch committed and stands") as info:
        flow.step()
    assert info.value.report.epoch == 0
    assert flow.epoch == 1 and view.to_dict() == {1: 1}
    x.insert([2])
    with pytest.raises(SubscriberError):
        flow.step()
    expected = [[(1, (0,), 1)], [(2, (1,), 1)]]
    assert seen_a == expected
    assert seen_c == expected  # every epoch, with its true time



def test_interrupt_in_a_subscriber_still_serves_the_others():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    seen = []

    def stop(updates):
        raise KeyboardInterrupt

    x.subscribe(stop)
    x.subscribe(seen.append)
    x.insert([1])
    with pytest.raises(KeyboardInterrupt) as info:
        flow.step()
    assert any("epoch committed" in n for n in info.value.__notes__)
    assert seen == [[(1, (0,), 1)]] and flow.epoch == 1

