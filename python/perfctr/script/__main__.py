# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""python3 -m perfctr.script [-i FILE] [--no-callchain] SCRIPT [ARGS...]
python3 -m perfctr.script [-i FILE] --gen-script python

What `perfex script -s` and `perfex script -g python` run."""
import sys

from perfctr.script import EXIT_USAGE, generate, run


def main(argv):
    input, callchain, gen = "perf.data", True, None
    while argv and argv[0].startswith("-"):
        opt = argv.pop(0)
        if opt == "--":
            break
        if opt == "-i" and argv:
            input = argv.pop(0)
        elif opt == "--no-callchain":
            callchain = False
        elif opt == "--gen-script" and argv:
            gen = argv.pop(0)
        else:
            print("perfex: unknown option '%s' of perfctr.script" % opt,
                  file=sys.stderr)
            return EXIT_USAGE
    if gen is not None:
        if gen not in ("python", "py"):
            print("perfex: cannot generate a '%s' script\n"
                  "hint: perfex script -g python" % gen, file=sys.stderr)
            return EXIT_USAGE
        return generate(input)
    if not argv:
        print("perfex: no script given\nhint: perfex script -s SCRIPT.py",
              file=sys.stderr)
        return EXIT_USAGE
    return run(input, argv[0], argv[1:], callchain)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
