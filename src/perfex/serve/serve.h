/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve — the exporter's internal interfaces, between its modules:
 *
 *   config.c    the configuration: file + command line, reloaded on SIGHUP
 *   exporter.c  the counting sessions (whole machine and each cgroup,
 *               cgroups under a root followed), read at each scrape
 *   text.c      text bodies, plain or gzip'd as they are written, and the
 *               Prometheus / OpenMetrics text of a family (text.h)
 *   metrics.c   the families served: counts and the exporter's health
 *   http.c      the HTTP server (libmicrohttpd) and its handler table
 *   main.c      perfex-serve's main: options, signals, the main loop
 *   profile.c   /debug/pprof/profile: cpu-clock profiles in pprof format
 *
 * Another module serves a path of its own by registering a handler with
 * serve_http_handle() before serve_http_start() (as the exporter registers
 * /metrics); main.c's modules[] table is where such a module is hooked in.
 */
#ifndef PERFEX_SERVE_H
#define PERFEX_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- config */

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9717"
/* The longest profile /debug/pprof/profile takes without
 * profile-max-seconds. */
#define SERVE_DEFAULT_PROFILE_MAX 300

struct serve_label {
	char *name;
	char *value;
};

struct serve_config {
	char *listen;		/* ADDR:PORT */
	char **events;		/* event specifications, as perfex -e */
	size_t nr_events;
	size_t *event_lines;	/* the config line of each (0: command line) */
	char **cgroups;		/* cgroups counted by name */
	size_t nr_cgroups;
	char **roots;		/* cgroups counted with all below them */
	size_t nr_roots;
	char *cpus;		/* CPU list, NULL for every online CPU */
	struct serve_label *labels;
	size_t nr_labels;
	char *file;		/* the configuration file, or NULL */
	unsigned int profile_max_seconds;	/* 0: the default */
	bool profile_max_flag;	/* set by the command line (it wins) */
	/* Cgroups counted with the kernel's cgroup events, not through the
	 * BPF counters (--no-bpf-counters, "bpf-counters no"). */
	bool no_bpf;
	bool no_bpf_flag;	/* set by the command line (it wins) */
	/* Cardinality: cgroups under a root deeper than depth levels below
	 * it are not counted (when has_depth); shell patterns on the cgroup
	 * path a cgroup under a root must match (one of, when any) and must
	 * not match; and the most series of the count families (0: any). */
	bool has_depth;
	unsigned int depth;
	char **includes;
	size_t nr_includes;
	char **excludes;
	size_t nr_excludes;
	unsigned long long max_series;
	bool depth_flag, max_series_flag;	/* the command line's: they win */
};

/*
 * Read @path (when non-NULL) into @cfg, on top of what @cfg holds (the
 * command line's values are added to the file's lists; the command line's
 * listen address and CPUs win).  Errors are printed, naming the line:
 * "perfex: config 'F' line 3: unknown key 'evnt'".
 * Return: -1 on success, else perfex's exit status (cfg then undefined,
 * free it).
 */
int serve_config_read(struct serve_config *cfg, const char *path);

/* perfex-serve's command line (main.c): the process exit status. */
int perfex_serve_main(int argc, char **argv);

/* Add one value of a list key ("event", "cgroup", "cgroup-root",
 * "label", "cgroup-include", "cgroup-exclude") as the file would; @line 0
 * for the command line.
 * Return: -1, or the exit status after the error. */
int serve_config_add(struct serve_config *cfg, const char *key,
		     const char *value, size_t line);

/* A number setting: "cgroup-depth" (0 to 32) or "max-series" (1 or
 * more); @line 0 for the command line.  Return -1, or the exit status
 * after the error. */
int serve_config_set_number(struct serve_config *cfg, const char *key,
			    const char *value, size_t line);

/* profile-max-seconds: 1 to 86400.  Return -1, or the exit status
 * after the error. */
int serve_config_set_profile_max(struct serve_config *cfg, const char *value,
				 size_t line);

void serve_config_free(struct serve_config *cfg);

/* ----------------------------------------------------------- exporter */

struct serve_exporter;

/* Formats of a scrape, chosen by serve_negotiate(). */
enum serve_format {
	SERVE_FORMAT_PROMETHEUS,	/* text/plain; version=0.0.4 */
	SERVE_FORMAT_OPENMETRICS,	/* application/openmetrics-text; 1.0.0 */
};

/*
 * The sessions of @cfg (kept by reference: the exporter owns it from now
 * on and frees it).  Events that cannot count are logged and reported,
 * not fatal.  Return: NULL with *@exit_code set after the error.
 */
struct serve_exporter *serve_exporter_new(struct serve_config *cfg,
					  int *exit_code);
void serve_exporter_delete(struct serve_exporter *ex);

/* The fd to poll for cgroup changes under the followed roots (inotify),
 * or -1 when there is none (then every scrape looks for them). */
int serve_exporter_watch_fd(const struct serve_exporter *ex);

/* Follow cgroups made or removed: drain the watch fd, rescan. */
void serve_exporter_rescan(struct serve_exporter *ex);

/* Take @cfg (owned from now on) in place of the running configuration;
 * on failure keep the old one.  Return: 0 or -1 (logged). */
int serve_exporter_reload(struct serve_exporter *ex, struct serve_config *cfg);

/* Count a failed reload (a configuration that did not parse). */
void serve_exporter_reload_failed(struct serve_exporter *ex);

/*
 * One scrape in @format: read every counter and format the families,
 * gzip'd as they are written when @gzip (and zlib is there: *@gzipped
 * says).
 * Return: a malloc'd body of *@len bytes (plain: NUL-terminated), or NULL
 * on ENOMEM.
 * Thread safety: serialised inside (one scrape or rescan at a time).
 */
char *serve_exporter_scrape(struct serve_exporter *ex, enum serve_format format,
			    bool gzip, size_t *len, bool *gzipped);

/* The listen address of the running configuration. */
const char *serve_exporter_listen(const struct serve_exporter *ex);

/* How requests of /debug/pprof/profile ended, for perfex_profiles_total. */
enum serve_profile_result {
	SERVE_PROFILE_OK,		/* a profile was served */
	SERVE_PROFILE_CONFLICT,		/* one of the target was running */
	SERVE_PROFILE_BAD_REQUEST,	/* bad seconds or cgroup */
	SERVE_PROFILE_FAILED,		/* the profile could not be made */
	SERVE_PROFILE_NR_RESULTS
};

/* A profile starts (@running 1), ends (-1) or neither (0); a request
 * ends with @result (or SERVE_PROFILE_NR_RESULTS: not yet).  Any thread. */
void serve_exporter_count_profile(struct serve_exporter *ex, int running,
				  enum serve_profile_result result);

/* The longest profile of the running configuration, in seconds.
 * Thread safety: any thread (taken under the exporter's lock). */
unsigned int serve_exporter_profile_max_seconds(struct serve_exporter *ex);

/* --------------------------------------------------------------- http */

/* The format an Accept header asks for (NULL: Prometheus text). */
enum serve_format serve_negotiate(const char *accept);
/* The Content-Type of a format. */
const char *serve_content_type(enum serve_format format);
/* Whether an Accept-Encoding header (NULL: none) takes gzip. */
bool serve_accepts_gzip(const char *accept_encoding);

struct serve_request {
	const char *path;	/* "/metrics" */
	const char *accept;	/* the Accept header, or NULL */
	bool gzip_ok;		/* the client takes gzip (Accept-Encoding) */
	void *conn;		/* the server's, for serve_request_arg() */
};

struct serve_reply {
	unsigned int status;		/* HTTP status, 200 unless set */
	const char *content_type;	/* static string */
	char *body;			/* malloc'd; the server frees it */
	size_t len;
	/* Sent gzip'd to a client that accepts it (text, not pprof's
	 * already gzip'd profiles). */
	bool compressible;
	/* The handler gzip'd the body itself (a client with gzip_ok). */
	bool gzipped;
};

/* A query argument of @req ("seconds" of "?seconds=5"), or NULL. */
const char *serve_request_arg(const struct serve_request *req,
			      const char *key);

/*
 * A handler: fill @reply for @req.  It runs in the thread of the request's
 * connection (one thread per connection), so a slow handler does not hold
 * up the others; it synchronises its own state.
 */
typedef void serve_handler_fn(const struct serve_request *req,
			      struct serve_reply *reply, void *arg);

struct serve_http;

struct serve_http *serve_http_new(void);
/* Serve @path (exact match) with @fn; before serve_http_start().
 * Return: 0, -EEXIST, -ENOMEM, -EBUSY once started. */
int serve_http_handle(struct serve_http *http, const char *path,
		      const char *what, serve_handler_fn *fn, void *arg);
/* Listen on @listen ("ADDR:PORT", "[V6]:PORT"); *@port gets the bound
 * port.  Return: 0, or -errno after the error is printed. */
int serve_http_start(struct serve_http *http, const char *listen,
		     unsigned int *port);
/* Stop serving (waits for running requests), free. */
void serve_http_delete(struct serve_http *http);
/* Whether the server was built in (libmicrohttpd). */
bool serve_http_available(void);

/* ------------------------------------------------------------ profile */

/* Serve /debug/pprof/profile (profile.c); *@state is the module's. */
int serve_profile_init(struct serve_http *http, struct serve_exporter *ex,
		       void **state);
/* Before serve_http_delete(): running profiles end within a second. */
void serve_profile_stop(void *state);
/* After serve_http_delete(): free the module's state. */
void serve_profile_free(void *state);

/* "perfex serve: " + message on stderr: the log. */
void serve_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PERFEX_SERVE_H */
