# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""perf_trace_context for scripts run by `perfex script -s`: the values
of the sample being handled that its handler's `context` argument names."""
from perfctr import _data


def common_pc(context):
    """The preempt count of the tracepoint sample being handled."""
    return _data.context_common(context, "common_preempt_count")


def common_flags(context):
    """The irq/softirq flags of the tracepoint sample being handled."""
    return _data.context_common(context, "common_flags")


def common_lock_depth(context):
    """The lock depth of the tracepoint sample (None: not recorded)."""
    v = _data.context_common(context, "common_lock_depth")
    return None if v is None or v < 0 else v


def perf_sample_insn(context):
    """The sampled instruction's bytes: not recorded by perfex (None)."""
    return None


def perf_sample_srcline(context):
    return None


def perf_sample_srccode(context):
    return None


def perf_set_itrace_options(context, options):
    """Instruction trace decoding is not supported: a no-op."""
    return None
