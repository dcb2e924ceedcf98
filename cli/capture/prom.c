// SPDX-License-Identifier: GPL-2.0
/* A Prometheus text-format file, replaced atomically (prom.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prom.h"

static bool prom_name_ok(const char *s, bool colon)
{
	const char *p;

	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return false;
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || (colon && *p == ':')))
			return false;
	return true;
}

bool prom_metric_name_ok(const char *name)
{
	return prom_name_ok(name, true);
}

bool prom_label_name_ok(const char *name)
{
	return prom_name_ok(name, false) && strncmp(name, "__", 2);
}

static void prom_escape(FILE *f, const char *v, bool quote)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else if (quote && *v == '"')
			fputs("\\\"", f);
		else
			fputc(*v, f);
	}
}

void prom_escape_value(FILE *f, const char *v)
{
	prom_escape(f, v, true);
}

int prom_begin(struct prom *p, const char *path)
{
	int fd;

	memset(p, 0, sizeof(*p));
	p->path = strdup(path);
	if (!p->path || asprintf(&p->tmp, "%s.tmp", path) < 0) {
		free(p->path);
		p->tmp = p->path = NULL;
		return -ENOMEM;
	}
	fd = open(p->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd >= 0)
		p->f = fdopen(fd, "w");
	if (!p->f) {
		p->err = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(p->tmp);
		}
		prom_abort(p);
		return p->err ? p->err : -EIO;
	}
	return 0;
}

void prom_family(struct prom *p, const char *name, const char *type, const char *help)
{
	if (p->err)
		return;
	if (!prom_metric_name_ok(name)) {
		p->err = -EINVAL;
		return;
	}
	fprintf(p->f, "# HELP %s ", name);
	prom_escape(p->f, help, false);
	fprintf(p->f, "\n# TYPE %s %s\n", name, type);
}

static void prom_head(struct prom *p, const char *name, const struct prom_label *l, size_t n)
{
	size_t i;

	if (!prom_metric_name_ok(name)) {
		p->err = -EINVAL;
		return;
	}
	for (i = 0; i < n; i++)
		if (!prom_label_name_ok(l[i].name)) {
			p->err = -EINVAL;
			return;
		}
	fputs(name, p->f);
	if (!n)
		return;
	fputc('{', p->f);
	for (i = 0; i < n; i++) {
		fprintf(p->f, "%s%s=\"", i ? "," : "", l[i].name);
		prom_escape_value(p->f, l[i].value ? l[i].value : "");
		fputc('"', p->f);
	}
	fputc('}', p->f);
}

void prom_sample_i(struct prom *p, const char *name, const struct prom_label *l, size_t n,
		   int64_t v)
{
	if (p->err)
		return;
	prom_head(p, name, l, n);
	if (!p->err)
		fprintf(p->f, " %" PRId64 "\n", v);
}

void prom_sample_d(struct prom *p, const char *name, const struct prom_label *l, size_t n,
		   double v)
{
	if (p->err)
		return;
	prom_head(p, name, l, n);
	if (p->err)
		return;
	if (isnan(v))
		fputs(" NaN\n", p->f);
	else if (isinf(v))
		fputs(v > 0 ? " +Inf\n" : " -Inf\n", p->f);
	else
		fprintf(p->f, " %.9g\n", v);
}

void prom_abort(struct prom *p)
{
	if (p->f) {
		fclose(p->f);
		unlink(p->tmp);
	}
	free(p->path);
	free(p->tmp);
	p->f = NULL;
	p->path = p->tmp = NULL;
}

int prom_commit(struct prom *p)
{
	int err = p->err;

	if (!p->f)
		return err ? err : -EBADF;
	if (!err && (fflush(p->f) || ferror(p->f)))
		err = -(errno ? errno : EIO);
	if (!err && fsync(fileno(p->f)) < 0)
		err = -errno;
	if (fclose(p->f) && !err)
		err = -(errno ? errno : EIO);
	p->f = NULL;
	if (!err && rename(p->tmp, p->path) < 0)
		err = -errno;
	if (err)
		unlink(p->tmp);
	free(p->path);
	free(p->tmp);
	p->path = p->tmp = NULL;
	return err;
}
