// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of the pprof encoder: synthetic samples encoded, then
 * decompressed and decoded again with protobuf-c, checked field by field
 * against the profile.proto schema (string 0 empty, ids from 1, stacks
 * merged, labels, mappings with build-ids, the main binary first). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfctr/pprof.h>

#include "test.h"

#if defined(HAVE_PROTOBUFC) && defined(HAVE_ZLIB)
#include <zlib.h>
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;

#define F(s, d, a) { .dso = d, .sym = s, .addr = a, .kernel = false }
#define K(s, a) { .dso = "[kernel.kallsyms]", .sym = s, .addr = a, .kernel = true }

static const struct perfctr_frame chain_a[] = {	/* leaf first */
	F("spin", "/bin/w", 0x1010), F("work", "/bin/w", 0x1100),
	F("main", "/bin/w", 0x1200),
};
static const struct perfctr_frame chain_k[] = {
	K("do_syscall_64", 0xffffffff81000010ULL),
	F("getppid", "/lib/libc.so.6", 0x5000), F("main", "/bin/w", 0x1200),
};
static const struct perfctr_frame chain_unk[] = {
	{ .dso = NULL, .sym = NULL, .addr = 0x1234, .kernel = false },
};

/* Gunzip and decode @buf; NULL (with a failure noted) when it is no
 * gzip'd profile. */
static Profile *decode(const void *buf, size_t size)
{
	z_stream z = { 0 };
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	Profile *prof = NULL;

	REQUIRE(raw);
	REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);	/* gzip only */
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)size;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	CHECK_EQ_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
	if (!test_failed())
		prof = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	CHECK(prof != NULL);
	return prof;
}

static Profile *encode(struct perfctr_pprof *pp)
{
	void *buf = NULL;
	size_t size = 0;
	Profile *prof;

	REQUIRE(perfctr_pprof__encode(pp, &buf, &size) == 0);
	REQUIRE(size > 18);
	/* gzip's magic: what go tool pprof sniffs for. */
	CHECK(((uint8_t *)buf)[0] == 0x1f && ((uint8_t *)buf)[1] == 0x8b);
	prof = decode(buf, size);
	free(buf);
	REQUIRE(prof);
	return prof;
}

static const char *str(const Profile *p, int64_t idx)
{
	if (idx < 0 || (size_t)idx >= p->n_string_table)
		return "<out of range>";
	return p->string_table[idx];
}

static const Perftools__Profiles__Location *loc(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static const char *loc_name(const Profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *l = loc(p, id);

	if (!l || !l->n_line)
		return NULL;
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == l->line[0]->function_id)
			return str(p, p->function[i]->name);
	return "<no function>";
}

static const char *loc_dso(const Profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *l = loc(p, id);

	for (size_t i = 0; l && i < p->n_mapping; i++)
		if (p->mapping[i]->id == l->mapping_id)
			return str(p, p->mapping[i]->filename);
	return NULL;
}

static const char *label_str(const Perftools__Profiles__Sample *s,
			     const Profile *p, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(str(p, s->label[i]->key), key))
			return str(p, s->label[i]->str);
	return NULL;
}

static void add(struct perfctr_pprof *pp, const struct perfctr_frame *f,
		size_t n, const char *comm, int tid, int64_t v0, int64_t v1,
		int times)
{
	int64_t values[2] = { v0, v1 };
	struct perfctr_pprof_sample s = {
		.sz = sizeof(s), .values = values, .nr_values = 2,
		.frames = f, .nr_frames = n, .comm = comm, .pid = 100,
		.tid = tid, .event = "cpu-clock",
	};

	for (int i = 0; i < times; i++)
		CHECK_EQ_INT(perfctr_pprof__add(pp, &s), 0);
}

TEST(encodes_merged_samples_with_labels)
{
	PERFCTR_OPTS(perfctr_pprof_opts, opts, .time_nanos = 1234,
		     .duration_nanos = 5000000000LL, .period_type = "cpu",
		     .period_unit = "nanoseconds", .period = 10101010,
		     .comment = "a note");
	struct perfctr_pprof *pp = perfctr_pprof__new(&opts);
	Profile *p;
	size_t i;
	int64_t samples = 0, cpu = 0;

	REQUIRE(pp);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "samples", "count"), 0);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "cpu", "nanoseconds"), 1);
	CHECK_EQ_INT(perfctr_pprof__set_default_sample_type(pp, 1), 0);
	CHECK_EQ_INT(perfctr_pprof__set_default_sample_type(pp, 2), -ERANGE);
	add(pp, chain_a, 3, "w", 100, 1, 1000, 5);
	add(pp, chain_a, 3, "w", 101, 1, 1000, 2);	/* another thread */
	add(pp, chain_k, 3, "w", 100, 1, 1000, 3);
	add(pp, chain_unk, 1, NULL, 100, 1, 1000, 1);
	/* Sample types are fixed once samples exist. */
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "x", "count"), -EBUSY);
	CHECK_EQ_U64(perfctr_pprof__nr_samples(pp), 4);
	CHECK_EQ_INT(perfctr_pprof__set_build_id(pp, "/bin/w",
		     (const uint8_t *)"\x01\xab\xcd", 3), 0);

	p = encode(pp);
	CHECK_STR(p->string_table[0], "");
	CHECK_EQ_U64(p->n_sample_type, 2);
	CHECK_STR(str(p, p->sample_type[0]->type), "samples");
	CHECK_STR(str(p, p->sample_type[1]->unit), "nanoseconds");
	CHECK_STR(str(p, p->default_sample_type), "cpu");
	CHECK_EQ_INT(p->time_nanos, 1234);
	CHECK_EQ_INT(p->duration_nanos, 5000000000LL);
	REQUIRE(p->period_type);
	CHECK_STR(str(p, p->period_type->type), "cpu");
	CHECK_EQ_INT(p->period, 10101010);
	REQUIRE(p->n_comment == 1);
	CHECK_STR(str(p, p->comment[0]), "a note");

	/* 4 distinct stacks-with-labels, values summed. */
	REQUIRE(p->n_sample == 4);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		REQUIRE(s->n_value == 2);
		samples += s->value[0];
		cpu += s->value[1];
		CHECK_STR(label_str(s, p, "event"), "cpu-clock");
	}
	CHECK_EQ_INT(samples, 11);
	CHECK_EQ_INT(cpu, 11000);
	/* The first sample: chain_a of tid 100, 5 times, leaf first. */
	CHECK_EQ_INT(p->sample[0]->value[0], 5);
	REQUIRE(p->sample[0]->n_location_id == 3);
	CHECK_STR(loc_name(p, p->sample[0]->location_id[0]), "spin");
	CHECK_STR(loc_name(p, p->sample[0]->location_id[2]), "main");
	CHECK_STR(loc_dso(p, p->sample[0]->location_id[0]), "/bin/w");
	CHECK_STR(label_str(p->sample[0], p, "comm"), "w");
	/* One location per distinct frame: main is shared by chain_a and
	 * chain_k; 3 + 2 + 1 in all. */
	CHECK_EQ_U64(p->n_location, 6);
	CHECK_EQ_INT(p->sample[0]->location_id[2], p->sample[2]->location_id[2]);
	CHECK_EQ_U64(p->n_function, 5);
	/* The unresolved frame: a location with no line, no mapping. */
	REQUIRE(p->sample[3]->n_location_id == 1);
	CHECK(loc_name(p, p->sample[3]->location_id[0]) == NULL);
	CHECK_EQ_U64(loc(p, p->sample[3]->location_id[0])->address, 0x1234);
	CHECK(label_str(p->sample[3], p, "comm") == NULL);

	/* Mappings: user DSOs first, most leaf samples first (the main
	 * binary is mapping 1, as pprof expects); the kernel last. */
	REQUIRE(p->n_mapping == 3);
	CHECK_STR(str(p, p->mapping[0]->filename), "/bin/w");
	CHECK_EQ_U64(p->mapping[0]->id, 1);
	CHECK_STR(str(p, p->mapping[0]->build_id), "01abcd");
	CHECK_EQ_U64(p->mapping[0]->memory_start, 0x1010);
	CHECK_EQ_U64(p->mapping[0]->memory_limit, 0x1201);
	CHECK(p->mapping[0]->has_functions);
	CHECK_STR(str(p, p->mapping[1]->filename), "/lib/libc.so.6");
	CHECK_STR(str(p, p->mapping[2]->filename), "[kernel.kallsyms]");
	CHECK_EQ_INT(p->mapping[2]->build_id, 0);
	for (i = 0; i < p->n_location; i++)
		CHECK(p->location[i]->id == i + 1);

	perftools__profiles__profile__free_unpacked(p, NULL);
	perfctr_pprof__delete(pp);
}

TEST(thread_labels_can_be_left_out)
{
	PERFCTR_OPTS(perfctr_pprof_opts, opts, .no_thread_labels = true);
	struct perfctr_pprof *pp = perfctr_pprof__new(&opts);
	Profile *p;

	REQUIRE(pp);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "samples", "count"), 0);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "cpu", "nanoseconds"), 1);
	add(pp, chain_a, 3, "w", 100, 1, 7, 2);
	add(pp, chain_a, 3, "x", 101, 1, 7, 3);
	CHECK_EQ_U64(perfctr_pprof__nr_samples(pp), 1);
	p = encode(pp);
	REQUIRE(p->n_sample == 1);
	CHECK_EQ_INT(p->sample[0]->value[0], 5);
	CHECK_EQ_INT(p->sample[0]->value[1], 35);
	CHECK_EQ_U64(p->sample[0]->n_label, 1);	/* the event only */
	CHECK(p->period_type == NULL);
	perftools__profiles__profile__free_unpacked(p, NULL);
	perfctr_pprof__delete(pp);
}

TEST(sums_stay_at_the_int64_limits)
{
	struct perfctr_pprof *pp = perfctr_pprof__new(NULL);
	Profile *p;

	REQUIRE(pp);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "samples", "count"), 0);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "cpu", "nanoseconds"), 1);
	add(pp, chain_a, 3, "w", 100, INT64_MAX - 1, INT64_MIN + 1, 3);
	p = encode(pp);
	REQUIRE(p->n_sample == 1);
	CHECK(p->sample[0]->value[0] == INT64_MAX);
	CHECK(p->sample[0]->value[1] == INT64_MIN);
	perftools__profiles__profile__free_unpacked(p, NULL);
	perfctr_pprof__delete(pp);
}

TEST(rejects_bad_arguments)
{
	struct perfctr_pprof *pp = perfctr_pprof__new(NULL);
	int64_t v[3] = { 1, 2, 3 };
	struct perfctr_pprof_sample s = {
		.sz = sizeof(s), .values = v, .nr_values = 1,
		.frames = chain_a, .nr_frames = 0,
	};
	struct { struct perfctr_pprof_opts o; char tail[8]; } big;

	REQUIRE(pp);
	/* No sample type yet. */
	s.nr_frames = 1;
	CHECK_EQ_INT(perfctr_pprof__add(pp, &s), -EINVAL);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "samples", "count"), 0);
	CHECK_EQ_INT(perfctr_pprof__add(pp, &s), 0);
	s.nr_frames = 0;
	CHECK_EQ_INT(perfctr_pprof__add(pp, &s), -EINVAL);
	s.nr_frames = 1;
	s.nr_values = 3;		/* more values than types */
	CHECK_EQ_INT(perfctr_pprof__add(pp, &s), -EINVAL);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, NULL, "count"), -EINVAL);
	CHECK_EQ_INT(perfctr_pprof__set_build_id(pp, "/x", (uint8_t *)v, 0), -EINVAL);
	CHECK_EQ_INT(perfctr_pprof__set_build_id(pp, "/x", (uint8_t *)v, 65),
		     -EINVAL);
	CHECK_EQ_INT(perfctr_pprof__encode(pp, NULL, NULL), -EINVAL);
	CHECK_EQ_INT(perfctr_pprof__write(pp, -1), -EBADF);
	perfctr_pprof__delete(pp);
	perfctr_pprof__delete(NULL);

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail[3] = 1;		/* a newer struct's unknown field */
	errno = 0;
	CHECK(perfctr_pprof__new(&big.o) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
}

TEST(writes_to_a_file_descriptor)
{
	struct perfctr_pprof *pp = perfctr_pprof__new(NULL);
	char path[] = "/tmp/pc-pprof-XXXXXX";
	int fd = mkstemp(path);
	uint8_t buf[65536];
	ssize_t n;
	Profile *p;

	REQUIRE(pp && fd >= 0);
	unlink(path);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "samples", "count"), 0);
	CHECK_EQ_INT(perfctr_pprof__add_sample_type(pp, "cpu", "nanoseconds"), 1);
	add(pp, chain_k, 3, "w", 1, 1, 0, 1);
	CHECK_EQ_INT(perfctr_pprof__write(pp, fd), 0);
	n = pread(fd, buf, sizeof(buf), 0);
	REQUIRE(n > 0);
	p = decode(buf, (size_t)n);
	REQUIRE(p);
	CHECK_EQ_U64(p->n_sample, 1);
	CHECK_STR(loc_name(p, p->sample[0]->location_id[0]), "do_syscall_64");
	perftools__profiles__profile__free_unpacked(p, NULL);
	close(fd);
	perfctr_pprof__delete(pp);
}

TEST_MAIN(TEST_CASE(encodes_merged_samples_with_labels),
	  TEST_CASE(thread_labels_can_be_left_out),
	  TEST_CASE(sums_stay_at_the_int64_limits),
	  TEST_CASE(rejects_bad_arguments),
	  TEST_CASE(writes_to_a_file_descriptor))

#else /* no protobuf-c or no zlib */

TEST(encoder_present)
{
	errno = 0;
	if (!perfctr_pprof_available()) {
		CHECK(perfctr_pprof__new(NULL) == NULL && errno == ENOTSUP);
		test_skip("built without protobuf-c: no pprof encoder");
	}
	test_skip("built without zlib: the test cannot gunzip the profile");
}

TEST_MAIN(TEST_CASE(encoder_present))

#endif
