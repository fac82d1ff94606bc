// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of the raw evntsel rules (core/evntsel.h), one row per case,
 * for both architectures on any host. */
#include <errno.h>

#include "core/evntsel.h"
#include "test.h"

#define X86 PC_EVNTSEL_X86
#define ARM PC_EVNTSEL_ARM64

TEST(rules_and_encodings)
{
	static const struct {
		enum pc_evntsel_arch arch;
		unsigned int word;
		bool imode;
		int rc;
		uint64_t config;
		int exclude_user, exclude_kernel;
	} rows[] = {
		/* P6: INST_RETIRED (0xc0), USR+OS, EN. */
		{ X86, 0x004300c0, false, 0, 0xc0, 0, 0 },
		/* USR only, unit mask, edge, inv, cmask kept. */
		{ X86, 0x01c5012e, false, 0, 0x0184012e, 0, 1 },
		/* OS only. */
		{ X86, 0x0042003c, false, 0, 0x3c, 1, 0 },
		/* i-mode needs INT, a-mode forbids it. */
		{ X86, 0x005300c0, true, 0, 0xc0, 0, 0 },
		{ X86, 0x004300c0, true, -EINVAL, 0, 0, 0 },
		{ X86, 0x005300c0, false, -EINVAL, 0, 0, 0 },
		/* EN missing, reserved 19 and 21, neither USR nor OS. */
		{ X86, 0x000300c0, false, -EINVAL, 0, 0, 0 },
		{ X86, 0x004b00c0, false, -EINVAL, 0, 0, 0 },
		{ X86, 0x006300c0, false, -EINVAL, 0, 0, 0 },
		{ X86, 0x004000c0, false, -EINVAL, 0, 0, 0 },
		/* PMEVTYPER: INST_RETIRED user only (P excludes EL1). */
		{ ARM, 0x80000008, false, 0, 0x08, 0, 1 },
		{ ARM, 0x00000011, true, 0, 0x11, 0, 0 },
		{ ARM, 0x40000011, false, 0, 0x11, 1, 0 },
		{ ARM, 0xc0000011, false, -EINVAL, 0, 0, 0 },
		{ ARM, 0x00010011, false, -EINVAL, 0, 0, 0 },
		{ PC_EVNTSEL_NONE, 0x11, false, -EOPNOTSUPP, 0, 0, 0 },
	};
	struct perf_event_attr attr;
	char why[160];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		rc = pc_evntsel_to_attr(rows[i].arch, rows[i].word, rows[i].imode,
					&attr, why, sizeof(why));
		if (rc != rows[i].rc) {
			test_fail(__FILE__, __LINE__, "row %zu (%#x): rc %d, want %d (%s)",
				  i, rows[i].word, rc, rows[i].rc, why);
			continue;
		}
		if (rc) {
			CHECK(why[0] != '\0');
			continue;
		}
		CHECK_EQ_INT(attr.type, PERF_TYPE_RAW);
		if (attr.config != rows[i].config)
			test_fail(__FILE__, __LINE__, "row %zu: config %#llx, want %#llx",
				  i, (unsigned long long)attr.config,
				  (unsigned long long)rows[i].config);
		CHECK_EQ_INT(attr.exclude_user, rows[i].exclude_user);
		CHECK_EQ_INT(attr.exclude_kernel, rows[i].exclude_kernel);
		CHECK_EQ_INT(attr.sample_period, 0);
	}
}

TEST_MAIN(TEST_CASE(rules_and_encodings))
