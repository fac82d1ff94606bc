# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The demo project's tests, counted by perfctr's pytest plugin:

    python3 -m pytest -p perfctr.pytest examples/python

(installed with pip, the plugin loads by itself.)  Tracepoints need root
and tracefs; the hardware-event test is skipped, with its reason, on a
machine without a PMU."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from journal import Journal, checksum  # noqa: E402

WRITE = "syscalls:sys_enter_write"


@pytest.fixture
def journal(tmp_path):
    j = Journal(str(tmp_path / "journal.log"))
    yield j
    j.close()


def test_one_write_per_record(perfctr, journal):
    with perfctr.measure(WRITE) as m:
        journal.append_all(["a", "b", "c"])
    assert m[WRITE] == 3


# The budget counts the test function's call only: the journal fixture's
# open and close are not in it.
@pytest.mark.perfctr(events=WRITE, max={WRITE: 10})
def test_ten_records_within_budget(journal):
    journal.append_all(str(i) for i in range(10))


@pytest.mark.perfctr(events="syscalls:sys_enter_write,page-faults",
                     max={WRITE: 0})
def test_checksum_makes_no_system_call():
    assert checksum(["perfctr"] * 100) != 0


def test_instructions_need_a_pmu(perfctr):
    with perfctr.measure("instructions:u") as m:
        checksum(["x"] * 1000)
    assert m["instructions:u"] > 1000
