/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex-serve: `perfex serve`, a Prometheus / OpenMetrics exporter of
 * counting sessions (perfex-serve(1)).  perfex runs this program for its
 * `serve` subcommand (perfex.c says why it is a program of its own).
 *
 * The main thread owns the configuration and follows cgroups and signals
 * (one poll over a signalfd and the exporter's inotify fd); the HTTP
 * server answers in threads of its own, through the handlers registered
 * by the modules of modules[] below.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "options.h"
#include "perfex.h"
#include "serve.h"

struct serve_args {
	struct serve_config *cfg;
	const char *config_file;
	bool once;
};

static perfex_result serve_option(struct perfex_parse *p, void *ctx)
{
	struct serve_args *a = ctx;
	struct serve_config *cfg = a->cfg;
	char **slot = NULL;

	switch (p->opt->id) {
	case OPT_CONFIG:
		a->config_file = p->arg;
		return -1;
	case OPT_LISTEN:
		slot = &cfg->listen;
		break;
	case OPT_CPU:
		slot = &cfg->cpus;
		break;
	case OPT_EVENT:
		return serve_config_add(cfg, "event", p->arg, 0);
	case OPT_CGROUP:
		return serve_config_add(cfg, "cgroup", p->arg, 0);
	case OPT_CGROUP_ROOT:
		return serve_config_add(cfg, "cgroup-root", p->arg, 0);
	case OPT_LABEL:
		return serve_config_add(cfg, "label", p->arg, 0);
	case OPT_CGROUP_INCLUDE:
		return serve_config_add(cfg, "cgroup-include", p->arg, 0);
	case OPT_CGROUP_EXCLUDE:
		return serve_config_add(cfg, "cgroup-exclude", p->arg, 0);
	case OPT_CGROUP_DEPTH:
		return serve_config_set_number(cfg, "cgroup-depth", p->arg, 0);
	case OPT_MAX_SERIES:
		return serve_config_set_number(cfg, "max-series", p->arg, 0);
	case OPT_ONCE:
		a->once = true;
		return -1;
	case OPT_NO_BPF_COUNTERS:
		cfg->no_bpf = true;
		cfg->no_bpf_flag = true;
		return -1;
	case OPT_PROFILE_MAX:
		return serve_config_set_profile_max(cfg, p->arg, 0);
	default:
		return -1;
	}
	free(*slot);
	*slot = strdup(p->arg);
	return *slot ? -1 : PERFEX_EXIT_INTERNAL;
}

/* The configuration of the command line and its file, read anew at each
 * reload.  Return -1 or the exit status (printed). */
static int read_config(int argc, char **argv, struct serve_args *a)
{
	struct perfex_parse p;
	int ret;

	a->cfg = calloc(1, sizeof(*a->cfg));
	if (!a->cfg)
		return PERFEX_EXIT_INTERNAL;
	ret = perfex_options_parse(&p, PERFEX_CMD_SERVE, argc, argv, false,
				   serve_option, a);
	if (ret >= 0)
		return ret;
	if (optind < argc) {
		perfex_error("perfex serve takes no arguments ('%s')",
			     argv[optind]);
		perfex_hint("perfex serve --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (perfex_dry_run)
		return 0;
	return serve_config_read(a->cfg, a->config_file);
}

static void free_args(struct serve_args *a)
{
	serve_config_free(a->cfg);
	free(a->cfg);
	a->cfg = NULL;
}

/* /metrics: one scrape in the format the Accept header asks for. */
static void metrics_handler(const struct serve_request *req,
			    struct serve_reply *reply, void *arg)
{
	enum serve_format fmt = serve_negotiate(req->accept);

	reply->body = serve_exporter_scrape(arg, fmt, req->gzip_ok, &reply->len,
					    &reply->gzipped);
	reply->content_type = serve_content_type(fmt);
	reply->compressible = true;
	if (!reply->body)
		serve_log("scrape failed: %s (answered 500)", strerror(errno));
}

static int metrics_init(struct serve_http *http, struct serve_exporter *ex,
			void **state)
{
	return serve_http_handle(http, "/metrics", "counts (Prometheus text "
				 "or OpenMetrics, by the Accept header)",
				 metrics_handler, ex);
}

/*
 * The modules that serve paths: each registers its handlers before the
 * server starts, with state of its own in *state; stop (when set) is
 * called before the server stops, to end long requests, and free after.
 */
static const struct serve_module {
	const char *name;
	int (*init)(struct serve_http *http, struct serve_exporter *ex,
		    void **state);
	void (*stop)(void *state);
	void (*free)(void *state);
} modules[] = {
	{ "metrics", metrics_init, NULL, NULL },
	{ "profile", serve_profile_init, serve_profile_stop, serve_profile_free },
};

#define NR_MODULES (sizeof(modules) / sizeof(modules[0]))

/* Stop the server and free the modules' state. */
static void stop_modules(struct serve_http *http, void **state)
{
	for (size_t i = 0; i < NR_MODULES; i++)
		if (modules[i].stop)
			modules[i].stop(state[i]);
	serve_http_delete(http);
	for (size_t i = 0; i < NR_MODULES; i++)
		if (modules[i].free)
			modules[i].free(state[i]);
}

/* One fd per event, CPU and cgroup: 100 cgroups x 2 CPUs x 4 events is
 * 800; the soft limit (often 1024) is raised to the hard one. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int once(struct serve_exporter *ex)
{
	size_t len;
	bool gzipped;
	char *text = serve_exporter_scrape(ex, SERVE_FORMAT_PROMETHEUS, false,
					   &len, &gzipped);
	int ret = 0;

	if (!text) {
		perfex_error("cannot format the metrics: %s", strerror(errno));
		return PERFEX_EXIT_INTERNAL;
	}
	if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
		perfex_error("cannot write the metrics: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	free(text);
	return ret;
}

static int serve(int argc, char **argv, struct serve_exporter *ex,
		 int sigfd)
{
	struct serve_http *http = serve_http_new();
	void *state[NR_MODULES] = { 0 };
	unsigned int port = 0;
	int ret = 0;

	if (!http)
		return PERFEX_EXIT_INTERNAL;
	for (size_t i = 0; i < NR_MODULES; i++) {
		int err = modules[i].init(http, ex, &state[i]);

		if (err < 0) {
			perfex_error("cannot start module '%s': %s",
				     modules[i].name, strerror(-err));
			stop_modules(http, state);
			return PERFEX_EXIT_INTERNAL;
		}
	}
	ret = serve_http_start(http, serve_exporter_listen(ex), &port);
	if (ret < 0) {
		stop_modules(http, state);
		return ret == -EINVAL ? PERFEX_EXIT_USAGE :
		       ret == -ENOSYS ? PERFEX_EXIT_INTERNAL : PERFEX_EXIT_IO;
	}
	{
		const char *listen = serve_exporter_listen(ex);
		const char *colon = strrchr(listen, ':');
		int host_len = (int)(colon - listen);

		/* The port bound, which port 0 leaves to the kernel. */
		serve_log("serving http://%.*s:%u/metrics (port %u)",
			  host_len ? host_len : 9, host_len ? listen : "127.0.0.1",
			  port, port);
	}
	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = serve_exporter_watch_fd(ex), .events = POLLIN },
		};
		struct signalfd_siginfo si;

		if (poll(fds, fds[1].fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			perfex_error("poll: %s", strerror(errno));
			ret = PERFEX_EXIT_INTERNAL;
			break;
		}
		if (fds[1].fd >= 0 && (fds[1].revents & POLLIN))
			serve_exporter_rescan(ex);
		if (!(fds[0].revents & POLLIN) ||
		    read(sigfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			struct serve_args a = { 0 };
			const char *old = serve_exporter_listen(ex);
			char *listen_was = strdup(old);

			serve_log("SIGHUP: reloading the configuration");
			if (read_config(argc, argv, &a) >= 0) {
				free_args(&a);
				serve_exporter_reload_failed(ex);
			} else if (serve_exporter_reload(ex, a.cfg) == 0 &&
				   listen_was &&
				   strcmp(listen_was, serve_exporter_listen(ex))) {
				serve_log("the new address '%s' takes effect at "
					  "the next start; still serving '%s'",
					  serve_exporter_listen(ex), listen_was);
			}
			free(listen_was);
			continue;
		}
		serve_log("%s: stopping", strsignal((int)si.ssi_signo));
		break;
	}
	stop_modules(http, state);
	return ret;
}

int perfex_serve_main(int argc, char **argv)
{
	struct serve_args a = { 0 };
	struct serve_exporter *ex;
	sigset_t stop;
	int ret, sigfd;

	ret = read_config(argc, argv, &a);
	if (ret >= 0) {
		free_args(&a);
		return ret;
	}
	if (!a.once && !serve_http_available()) {
		unsigned int port;

		free_args(&a);
		return serve_http_start(NULL, "", &port) < 0 ? PERFEX_EXIT_INTERNAL : 0;
	}
	raise_fd_limit();
	/* A scrape of thousands of cgroups builds megabytes of text in a
	 * connection's thread: with the mmap threshold fixed, such buffers
	 * are mapped and unmapped, not kept in that thread's heap once the
	 * threshold has grown past them (glibc's default moves it up). */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	/* Blocked before any thread starts, so that every thread of the
	 * server inherits the mask and the signals reach the signalfd. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &stop, SFD_CLOEXEC);
	if (sigfd < 0) {
		perfex_error("signalfd: %s", strerror(errno));
		free_args(&a);
		return PERFEX_EXIT_INTERNAL;
	}
	ex = serve_exporter_new(a.cfg, &ret);
	a.cfg = NULL;		/* the exporter's now */
	if (!ex) {
		close(sigfd);
		return ret;
	}
	ret = a.once ? once(ex) : serve(argc, argv, ex, sigfd);
	serve_exporter_delete(ex);
	close(sigfd);
	return ret;
}

/* The argv fuzzer (tests/fuzz/fuzz_argv.c) calls perfex_serve_main(). */
#ifndef PERFEX_NO_MAIN
int main(int argc, char **argv)
{
	perfex_dry_run_from_env();
	return perfex_serve_main(argc, argv);
}
#endif
