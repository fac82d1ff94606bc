/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — common definitions: export marker, the opts-struct
 * convention, version, and the one global of the library (the log hook).
 *
 * Thread safety: perfctr_set_print() is not synchronised with concurrent
 * logging; call it before creating objects.  Everything else here is
 * thread-safe.
 */
#ifndef PERFCTR_COMMON_H
#define PERFCTR_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PERFCTR_API
#define PERFCTR_API __attribute__((visibility("default")))
#endif

/*
 * Every call that may grow takes a `const struct X_opts *opts` (NULL allowed)
 * whose first field is `size_t sz`.  Declare one with
 *
 *	PERFCTR_OPTS(perfctr_session_opts, opts,
 *		     .flags = PERFCTR_SESSION_INHERIT);
 *
 * The library accepts an older, smaller struct and rejects (EINVAL) a newer
 * one whose unknown tail is not all zero bytes.
 */
#define PERFCTR_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		struct TYPE ___o;					\
		memset(&___o, 0, sizeof(___o));				\
		___o = (struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
		___o;							\
	})

enum perfctr_print_level {
	PERFCTR_WARN,
	PERFCTR_INFO,
	PERFCTR_DEBUG,
};

typedef int (*perfctr_print_fn_t)(enum perfctr_print_level level,
				  const char *fmt, va_list ap);

/**
 * perfctr_set_print() - route the library's diagnostics.
 * @fn: the new hook, or NULL to silence the library entirely.
 *
 * The library never prints on its own otherwise: by default warnings go
 * to stderr, info and debug are dropped.
 *
 * Return: the previous hook.
 */
PERFCTR_API perfctr_print_fn_t perfctr_set_print(perfctr_print_fn_t fn);

/**
 * perfctr_version() - the library's version string, e.g. "0.1.0".
 */
PERFCTR_API const char *perfctr_version(void);

/* Which open failed the last perfctr_session__attach() or
 * perfctr_sampler__open(), and why. */
struct perfctr_attach_error {
	size_t sz;
	/* The errno of the open that failed; 0 when the last attach or
	 * open succeeded or failed before opening anything. */
	int32_t errnum;
	uint32_t event;		/* that event's index in the session or
				 * sampler */
	/* The access broker's reason when it refused that open (see
	 * perfctr_broker_info()), as "REASON (rule 'NAME')"; "" when the
	 * broker was not asked or did not answer. */
	char broker[256];
};

_Static_assert(sizeof(struct perfctr_attach_error) == 272,
	       "ABI: perfctr_attach_error");

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_COMMON_H */
