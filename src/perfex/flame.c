/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex report --folded and --flame: the profile's stack tree drawn in
 * FlameGraph's conventions (folded "a;b;c count" lines, and a
 * self-contained interactive SVG).  Only the profile's node iterators are
 * used.  FlameGraph orders siblings by name: so do we, ties (two frames
 * that print alike) most recent first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define NODE_INIT { .sz = sizeof(struct perfctr_profile_node) }

/* A child of a stack-tree node, with the name it is drawn with. */
struct kid {
	struct perfctr_profile_node node;
	char name[512];
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The name of a frame in stacks: "sym", "[dso]" when unresolved, "_[k]"
 * after a kernel frame; ';' and newlines would split the line. */
void report_stack_name(const struct perfctr_profile_node *n, char *buf,
		       size_t size)
{
	if (n->kind == PERFCTR_PROFILE_NODE_COMM) {
		snprintf(buf, size, "%s", n->name);
		return;
	}
	if (n->resolved)
		snprintf(buf, size, "%s%s", n->name, n->kernel ? "_[k]" : "");
	else
		snprintf(buf, size, "[%s]%s",
			 n->dso ? base_name(n->dso) : "unknown",
			 n->kernel ? "_[k]" : "");
	for (char *p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ':';
}

static int kid_cmp(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->node.first_seen > y->node.first_seen ? -1 :
	       x->node.first_seen < y->node.first_seen;
}

/* The children of @node in name order, in *@kids (the caller frees). */
static int sorted_kids(struct perfctr_profile *prof,
		       const struct perfctr_profile_node *node,
		       struct kid **kids)
{
	size_t i, n = node->nr_children;
	struct kid *k;
	int err;

	*kids = NULL;
	if (!n)
		return 0;
	k = malloc(n * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		k[i].node.sz = sizeof(k[i].node);
		err = perfctr_profile__child(prof, node, i, &k[i].node);
		if (err) {
			free(k);
			return err;
		}
		report_stack_name(&k[i].node, k[i].name, sizeof(k[i].name));
	}
	qsort(k, n, sizeof(*k), kid_cmp);
	*kids = k;
	return 0;
}

/* ---- folded stacks ---- */

static int write_folded(struct perfctr_profile *prof,
			const struct perfctr_profile_node *node, char **path,
			size_t len, size_t *cap, FILE *out, int *lines)
{
	struct kid *kids;
	size_t i;
	int err;

	if (node->self && len) {
		fprintf(out, "%.*s %" PRIu64 "\n", (int)len, *path, node->self);
		(*lines)++;
	}
	err = sorted_kids(prof, node, &kids);
	for (i = 0; !err && i < node->nr_children; i++) {
		size_t nlen = strlen(kids[i].name), need = len + 1 + nlen + 1;

		if (need > *cap) {
			size_t ncap = *cap * 2 > need ? *cap * 2 : need;
			char *p = realloc(*path, ncap);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			*path = p;
			*cap = ncap;
		}
		if (len)
			(*path)[len] = ';';
		memcpy(*path + len + (len ? 1 : 0), kids[i].name, nlen);
		err = write_folded(prof, &kids[i].node, path,
				   len + (len ? 1 : 0) + nlen, cap, out, lines);
	}
	free(kids);
	return err;
}

int report_write_folded(struct perfctr_profile *prof, FILE *out)
{
	struct perfctr_profile_node root = NODE_INIT;
	size_t cap = 4096;
	char *path;
	int lines = 0, err;

	err = perfctr_profile__stack_root(prof, &root);
	if (err)
		return err;
	path = malloc(cap);
	if (!path)
		return -ENOMEM;
	err = write_folded(prof, &root, &path, 0, &cap, out, &lines);
	free(path);
	if (err)
		return err;
	if (fflush(out) || ferror(out))
		return -EIO;
	return lines;
}

/* ---- flame graph ---- */

#define FRAME_HEIGHT 16
#define FONT_SIZE 12
#define PAD_TOP 60
#define PAD_BOTTOM 40
#define PAD_SIDE 10

static void xml_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if ((unsigned char)*s < 0x20 && *s != '\t')
				fputc('?', out);
			else
				fputc(*s, out);
		}
	}
}

/* Rows of the tree under and at @node; -errno on failure. */
static long tree_depth(struct perfctr_profile *prof,
		       const struct perfctr_profile_node *node)
{
	struct perfctr_profile_node kid = NODE_INIT;
	long best = 0, d;
	size_t i;
	int err;

	for (i = 0; i < node->nr_children; i++) {
		err = perfctr_profile__child(prof, node, i, &kid);
		if (err)
			return err;
		d = tree_depth(prof, &kid);
		if (d < 0)
			return d;
		if (d > best)
			best = d;
	}
	return best + 1;
}

static uint64_t hash_bytes(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* Warm colours from the name, so a function keeps its colour across runs;
 * kernel frames a little more orange. */
static void frame_color(const char *name, char *buf, size_t size)
{
	uint64_t h = hash_bytes(name);
	bool kernel = strstr(name, "_[k]") != NULL;
	unsigned r = 205 + (unsigned)(h % 50);
	unsigned g = (kernel ? 120 : 60) + (unsigned)((h >> 8) % 130);
	unsigned b = (unsigned)((h >> 16) % 55);

	snprintf(buf, size, "rgb(%u,%u,%u)", r, g, b);
}

struct flame_ctx {
	struct perfctr_profile *prof;
	FILE *out;
	double scale;		/* pixels per weight unit */
	uint64_t total;
	size_t depth;		/* rows */
	unsigned int height;
	const char *unit;
	const struct report_flame_opts *opts;
};

static int flame_frame(struct flame_ctx *c,
		       const struct perfctr_profile_node *n, const char *name,
		       uint64_t start, size_t depth)
{
	double x = PAD_SIDE + start * c->scale, w = n->total * c->scale;
	double y = c->height - PAD_BOTTOM - (depth + 1) * (double)FRAME_HEIGHT;
	struct kid *kids;
	size_t i, fit;
	uint64_t off = start;
	char color[32], note[256] = "";
	int err;

	/* Frames thinner than a tenth of a pixel vanish, with their children. */
	if (w < 0.1)
		return 0;
	if (c->opts->paint)
		c->opts->paint(c->opts->paint_arg, depth, name, n, color,
			       sizeof(color), note, sizeof(note));
	else
		frame_color(name, color, sizeof(color));
	fprintf(c->out, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-e=\"%" PRIu64
		"\" data-d=\"%zu\"><title>", start, start + n->total, depth);
	xml_escape(c->out, name);
	fprintf(c->out, " (%" PRIu64 " %s, %.2f%%", n->total, c->unit,
		c->total ? 100.0 * n->total / c->total : 0.0);
	if (note[0]) {
		fputs("; ", c->out);
		xml_escape(c->out, note);
	}
	fputs(")</title>", c->out);
	fprintf(c->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\" ry=\"2\"/>", x, y, w, FRAME_HEIGHT - 1,
		color);
	fprintf(c->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4);
	/* About 7 pixels per character at this font size. */
	fit = w > 20 ? (size_t)((w - 6) / 7) : 0;
	if (fit >= strlen(name)) {
		xml_escape(c->out, name);
	} else if (fit > 2) {
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%.*s..", (int)(fit - 2), name);
		xml_escape(c->out, tmp);
	}
	fputs("</text></g>\n", c->out);

	err = sorted_kids(c->prof, n, &kids);
	for (i = 0; !err && i < n->nr_children; i++) {
		err = flame_frame(c, &kids[i].node, kids[i].name, off, depth + 1);
		off += kids[i].node.total;
	}
	free(kids);
	return err;
}

static const char flame_script[] =
"var svg=document.documentElement,frames=[],total=0,zoomed=null,searching=null;\n"
"function attr(g,n){return parseFloat(g.getAttribute('data-'+n));}\n"
"function init(){var gs=document.getElementsByClassName('f');\n"
" for(var i=0;i<gs.length;i++){var g=gs[i];var r=g.getElementsByTagName('rect')[0];\n"
"  var t=g.getElementsByTagName('text')[0];\n"
"  frames.push({g:g,r:r,t:t,s:attr(g,'s'),e:attr(g,'e'),d:attr(g,'d'),\n"
"   name:g.getElementsByTagName('title')[0].textContent.replace(/ \\([^(]*\\)$/,'')});\n"
"  g.addEventListener('click',function(ev){zoom(this);},false);\n"
"  g.addEventListener('mouseover',function(){details(this);},false);\n"
"  g.addEventListener('mouseout',function(){details(null);},false);}\n"
" total=frames.length?frames[0].e:0;\n"
" document.getElementById('reset').addEventListener('click',function(){unzoom();});\n"
" document.getElementById('search').addEventListener('click',function(){search();});\n"
" window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.keyCode===70){e.preventDefault();search();}},false);}\n"
"function find(g){for(var i=0;i<frames.length;i++)if(frames[i].g===g)return frames[i];return null;}\n"
"function details(g){var d=document.getElementById('details');\n"
" d.textContent=g?g.getElementsByTagName('title')[0].textContent:' ';}\n"
"function fit(f,w){var n=f.name,c=Math.floor((w-6)/7);\n"
" if(w<=20||c<3){f.t.textContent='';return;}\n"
" f.t.textContent=n.length<=c?n:n.substring(0,c-2)+'..';}\n"
"function place(f,x,w){f.r.setAttribute('x',x);f.r.setAttribute('width',w);\n"
" f.t.setAttribute('x',x+3);fit(f,w);f.g.style.display='';}\n"
"function zoom(g){var z=find(g);if(!z)return;zoomed=z;\n"
" var W=WIDTH-2*PAD,span=z.e-z.s;\n"
" for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  if(f.d<=z.d&&f.s<=z.s&&f.e>=z.e){place(f,PAD,W);f.g.style.opacity=f===z?'1':'0.6';}\n"
"  else if(f.d>z.d&&f.s>=z.s&&f.e<=z.e){place(f,PAD+(f.s-z.s)*W/span,(f.e-f.s)*W/span);f.g.style.opacity='1';}\n"
"  else f.g.style.display='none';}\n"
" document.getElementById('reset').style.opacity='1';}\n"
"function unzoom(){zoomed=null;var W=WIDTH-2*PAD;\n"
" for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  place(f,PAD+f.s*W/total,(f.e-f.s)*W/total);f.g.style.opacity='1';}\n"
" document.getElementById('reset').style.opacity='0.2';}\n"
"function search(){var term=window.prompt('Search for (regular expression):','');\n"
" var m=document.getElementById('matched');\n"
" for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  if(f.orig){f.r.setAttribute('fill',f.orig);f.orig=null;}}\n"
" if(!term){m.textContent=' ';return;}\n"
" var re;try{re=new RegExp(term);}catch(e){m.textContent='bad expression';return;}\n"
" var hit=[];for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  if(re.test(f.name)){f.orig=f.r.getAttribute('fill');f.r.setAttribute('fill','rgb(230,0,230)');hit.push(f);}}\n"
" hit.sort(function(a,b){return a.s-b.s||b.e-a.e;});\n"
" var covered=0,end=-1;for(var i=0;i<hit.length;i++){var f=hit[i];\n"
"  if(f.s>=end){covered+=f.e-f.s;end=f.e;}else if(f.e>end){covered+=f.e-end;end=f.e;}}\n"
" m.textContent='Matched: '+(total?(100*covered/total).toFixed(2):'0')+'%';}\n"
"window.addEventListener('load',init,false);\n";

int report_write_flame_svg(struct perfctr_profile *prof, FILE *out,
			   const struct report_flame_opts *opts)
{
	struct perfctr_profile_node root = NODE_INIT;
	struct flame_ctx c;
	const char *title = opts->title, *subtitle = opts->subtitle;
	unsigned int width = opts->width;
	long depth;
	int err;

	err = perfctr_profile__stack_root(prof, &root);
	if (err)
		return err;
	depth = tree_depth(prof, &root);
	if (depth < 0)
		return (int)depth;
	if (!title)
		title = "Flame Graph";
	if (width < 200)
		width = 1200;
	memset(&c, 0, sizeof(c));
	c.prof = prof;
	c.out = out;
	c.unit = opts->unit ? opts->unit : "samples";
	c.opts = opts;
	c.total = root.total;
	c.depth = (size_t)depth;
	c.height = (unsigned)(c.depth * FRAME_HEIGHT + PAD_TOP + PAD_BOTTOM);
	c.scale = c.total ? (double)(width - 2 * PAD_SIDE) / c.total : 0;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, c.height, width, c.height);
	fprintf(out, "<style type=\"text/css\">"
		"text{font-family:Verdana,sans-serif;font-size:%dpx;fill:rgb(0,0,0);}"
		".f:hover rect{stroke:black;stroke-width:0.5;cursor:pointer;}"
		"#title{font-size:17px;text-anchor:middle;}"
		"#subtitle{text-anchor:middle;fill:rgb(90,90,90);}"
		"#reset,#search{cursor:pointer;}"
		"</style>\n", FONT_SIZE);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\nvar WIDTH=%u,PAD=%d;\n%s]]></script>\n",
		width, PAD_SIDE, flame_script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"rgb(248,248,240)\"/>\n",
		width, c.height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", width / 2);
	xml_escape(out, title);
	fputs("</text>\n", out);
	if (subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%u\" y=\"44\">", width / 2);
		xml_escape(out, subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"reset\" x=\"%d\" y=\"24\" style=\"opacity:0.2\">Reset Zoom</text>\n",
		PAD_SIDE);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		width - PAD_SIDE);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		width - PAD_SIDE, c.height - 15);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		PAD_SIDE, c.height - 15);
	if (c.total)
		err = flame_frame(&c, &root, "all", 0, 0);
	if (err)
		return err;
	fputs("</svg>\n", out);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
