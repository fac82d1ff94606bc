# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""A tiny append-only journal: the code under test of the demo project.

Each record is one write(2) on an unbuffered file, so the number of
writes is part of the contract, and the tests count it.
"""
import os


class Journal:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def append(self, record):
        line = (record.rstrip("\n") + "\n").encode()
        os.write(self.fd, line)

    def append_all(self, records):
        for record in records:
            self.append(record)

    def close(self):
        os.close(self.fd)


def checksum(records):
    """A CPU-only function: it makes no system call at all."""
    total = 0
    for record in records:
        for ch in record.encode():
            total = (total * 31 + ch) & 0xFFFFFFFF
    return total
