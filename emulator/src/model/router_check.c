#include "router_check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "router_discipline.h"

/* "down.router.class.EF" (the configuration file's section) or, for an unnamed one,
 * "down.router.class[2]"; `what` is "class" or "filter". */
static void item_path(char *out, size_t n, const char *dn, const char *what, const char *name, size_t i)
{
	if (name[0])
		snprintf(out, n, "%s.router.%s.%.*s", dn, what, SQ_ROUTER_NAME_MAX, name);
	else
		snprintf(out, n, "%s.router.%s[%zu]", dn, what, i);
}

static bool check_class(const struct sq_router_config *rc, size_t i, const char *dn, char *err,
			size_t errlen)
{
	const struct sq_router_class *c = &rc->classes[i];
	char cp[96];
	item_path(cp, sizeof cp, dn, "class", c->name, i);
	if (memchr(c->name, '\0', sizeof c->name) == NULL) {
		snprintf(err, errlen, "%s.router.class[%zu].name: not NUL-terminated", dn, i);
		return false;
	}
	if (rc->scheduler == SQ_ROUTER_WEIGHTED && c->share_bps == 0) {
		snprintf(err, errlen, "%s.share: the weighted scheduler needs a share > 0 bit/s", cp);
		return false;
	}
	const struct sq_router_discipline *ops = sq_router_discipline(c->discipline);
	if (ops == NULL) {
		char names[128];
		sq_router_discipline_names(names, sizeof names, "", " or ", -1);
		snprintf(err, errlen, "%s.discipline: %d is not %s", cp, (int)c->discipline, names);
		return false;
	}
	return ops->check == NULL || ops->check(c, cp, err, errlen);
}

static bool check_filter(const struct sq_router_config *rc, size_t i, const char *dn, char *err,
			 size_t errlen)
{
	const struct sq_router_filter *f = &rc->filters[i];
	char fp[96];
	item_path(fp, sizeof fp, dn, "filter", f->name, i);
	if (f->class_index >= rc->n_classes) {
		snprintf(err, errlen, "%s.class: index %zu names no class (there are %zu)", fp,
			 f->class_index, rc->n_classes);
		return false;
	}
	if ((f->match_sport || f->match_dport) && !f->match_proto) {
		snprintf(err, errlen, "%s.%s: a port match needs a protocol match in the same filter",
			 fp, f->match_sport ? "sport" : "dport");
		return false;
	}
	if ((f->match_sport && f->sport_min > f->sport_max) ||
	    (f->match_dport && f->dport_min > f->dport_max)) {
		bool s = f->match_sport && f->sport_min > f->sport_max;
		snprintf(err, errlen, "%s.%s: range %u-%u is empty (first > last)", fp, s ? "sport" : "dport",
			 s ? f->sport_min : f->dport_min, s ? f->sport_max : f->dport_max);
		return false;
	}
	return true;
}

static bool check_shape(const struct sq_router_config *rc, const char *dn, char *err,
			size_t errlen)
{
	if (rc->scheduler != SQ_ROUTER_PRIORITY && rc->scheduler != SQ_ROUTER_WEIGHTED) {
		snprintf(err, errlen, "%s.router.scheduler: %d is not priority or weighted", dn,
			 (int)rc->scheduler);
		return false;
	}
	if (rc->n_classes < 1 || rc->n_classes > SQ_ROUTER_MAX_CLASSES) {
		snprintf(err, errlen, "%s.router.classes: %zu classes, expected 1 to %d", dn,
			 rc->n_classes, SQ_ROUTER_MAX_CLASSES);
		return false;
	}
	if (rc->default_class >= rc->n_classes) {
		snprintf(err, errlen, "%s.router.default: index %zu names no class (there are %zu)", dn,
			 rc->default_class, rc->n_classes);
		return false;
	}
	if (rc->n_filters > SQ_ROUTER_MAX_FILTERS) {
		snprintf(err, errlen, "%s.router.filters: %zu filters, at most %d", dn, rc->n_filters,
			 SQ_ROUTER_MAX_FILTERS);
		return false;
	}
	if (rc->device_queue > SQ_ROUTER_MAX_DEVICE_QUEUE) {
		snprintf(err, errlen, "%s.router.device_queue: %" PRIu32 " packets is more than the limit %d",
			 dn, rc->device_queue, SQ_ROUTER_MAX_DEVICE_QUEUE);
		return false;
	}
	return true;
}

bool sq_router_check(const struct sq_direction_config *d, const char *dn, char *err,
		     size_t errlen)
{
	const struct sq_router_config *rc = &d->router;
	if (!rc->enabled)
		return true;
	if (!check_shape(rc, dn, err, errlen))
		return false;
	for (size_t i = 0; i < rc->n_classes; i++)
		if (!check_class(rc, i, dn, err, errlen))
			return false;
	for (size_t i = 0; i < rc->n_filters; i++)
		if (!check_filter(rc, i, dn, err, errlen))
			return false;
	return true;
}
