/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve's HTTP side: libmicrohttpd (a thread per connection, so a
 * slow handler such as a profile of N seconds does not hold up scrapes),
 * a table of handlers by path, and the content negotiation of the
 * exposition formats.  Without libmicrohttpd the negotiation is still
 * here (it is pure) and serve_http_available() says false.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perfex.h"
#include "serve.h"
#include "text.h"

#ifdef HAVE_MICROHTTPD
#include <microhttpd.h>
#endif

/* ------------------------------------------------------- negotiation */

const char *serve_content_type(enum serve_format format)
{
	return format == SERVE_FORMAT_OPENMETRICS ?
	       "application/openmetrics-text; version=1.0.0; charset=utf-8" :
	       "text/plain; version=0.0.4; charset=utf-8";
}

static bool token_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !strncasecmp(s, word, len);
}

/*
 * Accept: a comma list of media ranges with parameters ("q=0.5",
 * "version=1.0.0").  The range with the highest q that we can serve
 * wins, the earlier one on a tie: OpenMetrics 1.0.0 (or without a
 * version), or the Prometheus text format for text/plain 0.0.4 (or
 * without a version), text/ * and * / *.
 */
enum serve_format serve_negotiate(const char *accept)
{
	enum serve_format best = SERVE_FORMAT_PROMETHEUS;
	double best_q = -1.0;

	if (!accept)
		return best;
	while (*accept) {
		size_t len = strcspn(accept, ",");
		const char *end = accept + len, *p = accept, *type;
		size_t type_len;
		const char *version = NULL;
		size_t version_len = 0;
		double q = 1.0;
		int kind = -1;	/* enum serve_format, -1: not ours */

		while (p < end && isspace((unsigned char)*p))
			p++;
		type = p;
		while (p < end && *p != ';' && !isspace((unsigned char)*p))
			p++;
		type_len = (size_t)(p - type);
		while (p < end) {
			const char *name, *val;
			size_t name_len, val_len;

			while (p < end && (*p == ';' || isspace((unsigned char)*p)))
				p++;
			name = p;
			while (p < end && *p != '=' && *p != ';')
				p++;
			name_len = (size_t)(p - name);
			while (name_len && isspace((unsigned char)name[name_len - 1]))
				name_len--;
			if (p >= end || *p != '=')
				continue;
			val = ++p;
			while (p < end && *p != ';')
				p++;
			val_len = (size_t)(p - val);
			while (val_len && isspace((unsigned char)val[val_len - 1]))
				val_len--;
			if (token_is(name, name_len, "q"))
				q = strtod(val, NULL);
			else if (token_is(name, name_len, "version")) {
				version = val;
				version_len = val_len;
			}
		}
		if (token_is(type, type_len, "application/openmetrics-text") &&
		    (!version || token_is(version, version_len, "1.0.0")))
			kind = SERVE_FORMAT_OPENMETRICS;
		else if (token_is(type, type_len, "text/plain") &&
			 (!version || token_is(version, version_len, "0.0.4")))
			kind = SERVE_FORMAT_PROMETHEUS;
		else if (token_is(type, type_len, "text/*") ||
			 token_is(type, type_len, "*/*"))
			kind = SERVE_FORMAT_PROMETHEUS;
		if (kind >= 0 && q > 0 && q > best_q) {
			best_q = q;
			best = (enum serve_format)kind;
		}
		accept = *end ? end + 1 : end;
	}
	return best;
}

/*
 * Accept-Encoding: whether "gzip" (or "*") is in the comma list with a
 * q above 0.  Prometheus asks for gzip on every scrape.
 */
bool serve_accepts_gzip(const char *accept_encoding)
{
	const char *p = accept_encoding;
	bool star = false;

	while (p && *p) {
		size_t len = strcspn(p, ",");
		const char *end = p + len, *tok, *q;
		size_t tok_len;
		bool ok = true;

		while (p < end && isspace((unsigned char)*p))
			p++;
		tok = p;
		while (p < end && *p != ';' && !isspace((unsigned char)*p))
			p++;
		tok_len = (size_t)(p - tok);
		q = strchr(p, ';');
		if (q && q < end) {
			q++;
			while (q < end && isspace((unsigned char)*q))
				q++;
			if ((*q == 'q' || *q == 'Q') && q[1] == '=')
				ok = strtod(q + 2, NULL) > 0;
		}
		if (token_is(tok, tok_len, "gzip"))
			return ok;
		if (token_is(tok, tok_len, "*"))
			star = ok;
		p = *end ? end + 1 : end;
	}
	return star;
}

#ifdef HAVE_MICROHTTPD
/* @reply's body in gzip, in place; false (the body as it was) on any
 * failure. */
static bool gzip_reply(struct serve_reply *reply)
{
	char *out;
	size_t len;

	if (!serve_gzip_buffer(reply->body, reply->len, &out, &len))
		return false;
	free(reply->body);
	reply->body = out;
	reply->len = len;
	return true;
}
#endif

/* ------------------------------------------------------------ handlers */

struct handler {
	char *path;
	const char *what;
	serve_handler_fn *fn;
	void *arg;
};

struct serve_http {
	struct handler *handlers;
	size_t nr_handlers;
	void *daemon;		/* struct MHD_Daemon */
	/* Requests between their headers and their reply's end, so that a
	 * stop lets them finish (a profile cut short still replies). */
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned int active;
};

/* Replies shorter than this go as they are: gzip would gain a few
 * hundred bytes at most. */
#define GZIP_MIN_BYTES 1024

/* How long a stop waits for the requests in progress to reply. */
#define STOP_GRACE_SECONDS 5

struct serve_http *serve_http_new(void)
{
	struct serve_http *http = calloc(1, sizeof(struct serve_http));

	if (!http)
		return NULL;
	pthread_mutex_init(&http->lock, NULL);
	pthread_cond_init(&http->idle, NULL);
	return http;
}

static void http_free(struct serve_http *http)
{
	for (size_t i = 0; i < http->nr_handlers; i++)
		free(http->handlers[i].path);
	free(http->handlers);
	pthread_cond_destroy(&http->idle);
	pthread_mutex_destroy(&http->lock);
	free(http);
}

int serve_http_handle(struct serve_http *http, const char *path,
		      const char *what, serve_handler_fn *fn, void *arg)
{
	struct handler *n;

	if (http->daemon)
		return -EBUSY;
	for (size_t i = 0; i < http->nr_handlers; i++)
		if (!strcmp(http->handlers[i].path, path))
			return -EEXIST;
	n = realloc(http->handlers, (http->nr_handlers + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	http->handlers = n;
	n += http->nr_handlers;
	n->path = strdup(path);
	if (!n->path)
		return -ENOMEM;
	n->what = what;
	n->fn = fn;
	n->arg = arg;
	http->nr_handlers++;
	return 0;
}

/* "/" lists what is served, as exporters' landing pages do. */
static void index_page(struct serve_http *http, struct serve_reply *reply)
{
	size_t cap = 256;
	char *body;
	int n;

	for (size_t i = 0; i < http->nr_handlers; i++)
		cap += 2 * strlen(http->handlers[i].path) +
		       strlen(http->handlers[i].what) + 64;
	body = malloc(cap);
	if (!body)
		return;
	n = snprintf(body, cap, "<html><head><title>perfex serve</title></head>"
		     "<body><h1>perfex serve</h1><ul>\n");
	for (size_t i = 0; i < http->nr_handlers && n > 0 && (size_t)n < cap; i++)
		n += snprintf(body + n, cap - (size_t)n,
			      "<li><a href=\"%s\">%s</a> %s</li>\n",
			      http->handlers[i].path, http->handlers[i].path,
			      http->handlers[i].what);
	if (n > 0 && (size_t)n < cap)
		n += snprintf(body + n, cap - (size_t)n, "</ul></body></html>\n");
	reply->body = body;
	reply->len = strlen(body);
	reply->content_type = "text/html; charset=utf-8";
}

#ifdef HAVE_MICROHTTPD

bool serve_http_available(void)
{
	return true;
}

const char *serve_request_arg(const struct serve_request *req,
			      const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result
answer(void *cls, struct MHD_Connection *conn, const char *url,
       const char *method, const char *version, const char *upload,
       size_t *upload_size, void **con_cls)
{
	struct serve_http *http = cls;
	struct serve_reply reply = { .status = 200 };
	struct serve_request req = {
		.path = url,
		.accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_ACCEPT),
		.gzip_ok = serve_accepts_gzip(MHD_lookup_connection_value(conn,
				MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING)),
		.conn = conn,
	};
	struct MHD_Response *resp;
	bool found = false, gzipped = false;
	enum MHD_Result ret;

	/* The first call only announces the request (headers read). */
	if (!*con_cls) {
		*con_cls = http;
		pthread_mutex_lock(&http->lock);
		http->active++;
		pthread_mutex_unlock(&http->lock);
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;	/* no bodies wanted: dropped */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		reply.status = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (!strcmp(url, "/")) {
		index_page(http, &reply);
		found = true;
	} else {
		for (size_t i = 0; i < http->nr_handlers; i++) {
			if (strcmp(http->handlers[i].path, url))
				continue;
			http->handlers[i].fn(&req, &reply, http->handlers[i].arg);
			found = true;
			break;
		}
		if (!found)
			reply.status = MHD_HTTP_NOT_FOUND;
	}
	if (!reply.body && reply.status == 200)
		reply.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	if (!reply.body) {
		const char *text = reply.status == MHD_HTTP_NOT_FOUND ?
				   "not found: / lists what is served\n" :
				   reply.status == MHD_HTTP_METHOD_NOT_ALLOWED ?
				   "only GET and HEAD\n" : "internal error\n";

		reply.body = strdup(text);
		reply.len = reply.body ? strlen(reply.body) : 0;
		reply.content_type = "text/plain; charset=utf-8";
	}
	if (reply.gzipped && reply.status == 200)
		gzipped = true;
	else if (reply.compressible && reply.status == 200 &&
		 reply.len >= GZIP_MIN_BYTES && req.gzip_ok)
		gzipped = gzip_reply(&reply);
	resp = MHD_create_response_from_buffer(reply.len, reply.body,
					       MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(reply.body);
		return MHD_NO;
	}
	if (reply.content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					reply.content_type);
	if (reply.compressible)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY,
					MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gzipped)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	ret = MHD_queue_response(conn, reply.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A request's reply was sent, or the request failed. */
static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode why)
{
	struct serve_http *http = cls;

	if (!*con_cls)
		return;
	*con_cls = NULL;
	pthread_mutex_lock(&http->lock);
	if (!--http->active)
		pthread_cond_broadcast(&http->idle);
	pthread_mutex_unlock(&http->lock);
}

/* libmicrohttpd's messages ("Failed to ...\n") as lines of our log. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t len;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '.'))
		msg[--len] = '\0';
	if (len)
		serve_log("http: %s", msg);
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss)
{
	const char *colon = strrchr(listen, ':');
	char host[256];
	unsigned long port;
	char *end;
	size_t hlen;

	if (!colon)
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535)
		return -EINVAL;
	hlen = (size_t)(colon - listen);
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, listen, hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && hlen >= 2 && host[hlen - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		host[hlen - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ?
		       0 : -EINVAL;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (!hlen) {	/* ":PORT": every IPv4 address */
			s4->sin_addr.s_addr = htonl(INADDR_ANY);
			return 0;
		}
		return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -EINVAL;
	}
}

int serve_http_start(struct serve_http *http, const char *listen,
		     unsigned int *port)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	/* poll(), not select(): an exporter counting a node's cgroups holds
	 * thousands of fds, and select() cannot take an accepted socket past
	 * FD_SETSIZE (1024): libmicrohttpd closed such connections at once,
	 * a reset with nothing said.  Its own errors go to our log. */
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC |
			     MHD_USE_ERROR_LOG;
	struct MHD_Daemon *d;

	if (parse_listen(listen, &ss) < 0) {
		perfex_error("cannot listen on '%s': not ADDR:PORT "
			     "(127.0.0.1:9717, [::1]:9717, :9717)", listen);
		return -EINVAL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* errno of the failed bind is what MHD leaves. */
	errno = 0;
	d = MHD_start_daemon(flags, 0, NULL, NULL, answer, http,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, http,
			     MHD_OPTION_END);
	if (!d) {
		int err = errno ? errno : EADDRNOTAVAIL;

		perfex_error("cannot listen on '%s': %s", listen, strerror(err));
		if (err == EADDRINUSE)
			perfex_hint("another program serves that port: choose "
				    "another with --listen ADDR:PORT");
		return -err;
	}
	http->daemon = d;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*port = info ? info->port : 0;
	return 0;
}

void serve_http_delete(struct serve_http *http)
{
	if (!http)
		return;
	if (http->daemon) {
		struct timespec end;
		int sock;

		/* No new connections; the requests in progress reply (MHD's
		 * stop would close their sockets under them), for a while. */
		sock = MHD_quiesce_daemon(http->daemon);
		if (sock >= 0)
			close(sock);
		clock_gettime(CLOCK_REALTIME, &end);
		end.tv_sec += STOP_GRACE_SECONDS;
		pthread_mutex_lock(&http->lock);
		while (http->active &&
		       pthread_cond_timedwait(&http->idle, &http->lock, &end) == 0)
			;
		pthread_mutex_unlock(&http->lock);
		MHD_stop_daemon(http->daemon);
	}
	http_free(http);
}

#else /* !HAVE_MICROHTTPD */

bool serve_http_available(void)
{
	return false;
}

const char *serve_request_arg(const struct serve_request *req,
			      const char *key)
{
	return NULL;
}

int serve_http_start(struct serve_http *http, const char *listen,
		     unsigned int *port)
{
	(void)index_page;
	perfex_error("cannot serve HTTP: perfex was built without libmicrohttpd");
	perfex_hint("install libmicrohttpd-dev and rebuild (make), or use "
		    "--once to print the metrics");
	return -ENOSYS;
}

void serve_http_delete(struct serve_http *http)
{
	if (http)
		http_free(http);
}

#endif
