#include "config_netem.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "value_parse.h"

#define MAX_WORDS 8

/* Splits v into whitespace-separated words (in buf); returns their number, -1 if too many. */
static int words(const char *v, char *buf, size_t buflen, char **w)
{
	if (strlen(v) >= buflen)
		return -1;
	strcpy(buf, v);
	int n = 0;
	for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_WORDS)
			return -1;
		w[n++] = t;
	}
	return n;
}

/* netem's PERCENT ("1%", "0.5%") or a probability ("0.01"), in [0, 1]. */
static bool parse_percent(const char *s, double *p)
{
	size_t n = strlen(s);
	if (n > 1 && s[n - 1] == '%') {
		char *end;
		double v = strtod(s, &end);
		if (end != s + n - 1 || !(v >= 0 && v <= 100))
			return false;
		*p = v / 100.0;
		return true;
	}
	return sq_parse_probability(s, p);
}

static struct sq_netem_config *netem_of(struct sq_emu_config *cfg, const struct where *w)
{
	return &cfg->link.dir[w->dir].netem;
}

static bool parse_percents(char **w, int n, double *out)
{
	for (int i = 0; i < n; i++)
		if (!parse_percent(w[i], &out[i]))
			return false;
	return true;
}

#define LOSS_EXPECTED                                                                          \
	"expected netem's loss: 'random P [CORR]', 'gemodel p [r [1-h [1-k]]]' or "            \
	"'state p13 [p31 [p32 [p23 [p14]]]]' with percentages like 1% or probabilities like 0.01"

const char *sq_set_netem_loss(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	char buf[256], *t[MAX_WORDS];
	int n = words(v, buf, sizeof buf, t);
	struct sq_netem_config *c = netem_of(cfg, w);
	if (n < 2)
		return LOSS_EXPECTED;
	double *a = c->loss;
	memset(a, 0, sizeof c->loss);
	/* tc's defaults for parameters left out */
	if (strcmp(t[0], "random") == 0 && n <= 3) {
		c->loss_model = SQ_NETEM_LOSS_RANDOM;
	} else if (strcmp(t[0], "gemodel") == 0 && n <= 5) {
		c->loss_model = SQ_NETEM_LOSS_GEMODEL;
		a[1] = 1.0;   /* r */
		a[2] = 1.0;   /* 1-h */
	} else if (strcmp(t[0], "state") == 0 && n <= 6) {
		c->loss_model = SQ_NETEM_LOSS_STATE;
		a[3] = 1.0;   /* p23 */
	} else {
		return LOSS_EXPECTED;
	}
	if (!parse_percents(t + 1, n - 1, a))
		return LOSS_EXPECTED;
	if (c->loss_model == SQ_NETEM_LOSS_STATE && n < 3)
		a[1] = 1.0 - a[0];   /* p31 = 1 - p13 */
	return NULL;
}

const char *sq_set_netem_delay(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	static const char expected[] = "expected netem's delay: 'TIME [JITTER [CORR]]' like '100ms 10ms 25%'";
	char buf[256], *t[MAX_WORDS];
	int n = words(v, buf, sizeof buf, t);
	struct sq_netem_config *c = netem_of(cfg, w);
	c->jitter_us = 0;
	c->delay_corr = 0;
	if (n < 1 || n > 3 || !sq_parse_duration(t[0], &c->latency_us) ||
	    (n > 1 && !sq_parse_duration(t[1], &c->jitter_us)) ||
	    (n > 2 && !parse_percent(t[2], &c->delay_corr)))
		return expected;
	return NULL;
}

static const char *const dist_names[] = { "uniform", "normal", "pareto", "paretonormal" };

const char *sq_set_netem_distribution(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	for (size_t i = 0; i < sizeof dist_names / sizeof dist_names[0]; i++) {
		if (strcmp(v, dist_names[i]) == 0) {
			netem_of(cfg, w)->distribution = (enum sq_netem_distribution)i;
			return NULL;
		}
	}
	return "expected 'uniform' (netem's default), 'normal', 'pareto' or 'paretonormal'";
}

static const char *set_chance(struct sq_netem_chance *ch, const char *v, const char *expected)
{
	char buf[256], *t[MAX_WORDS];
	int n = words(v, buf, sizeof buf, t);
	ch->corr = 0;
	if (n < 1 || n > 2 || !parse_percent(t[0], &ch->p) || (n > 1 && !parse_percent(t[1], &ch->corr)))
		return expected;
	return NULL;
}

const char *sq_set_netem_reorder(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return set_chance(&netem_of(cfg, w)->reorder, v, "expected netem's reorder: 'P [CORR]' like '25% 50%'");
}

const char *sq_set_netem_gap(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint64_t n;
	if (!sq_parse_count(v, UINT32_MAX, &n))
		return "expected netem's gap: a count like 5";
	netem_of(cfg, w)->gap = (uint32_t)n;
	return NULL;
}

const char *sq_set_netem_duplicate(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return set_chance(&netem_of(cfg, w)->duplicate, v, "expected netem's duplicate: 'P [CORR]' like '1%'");
}

const char *sq_set_netem_corrupt(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return set_chance(&netem_of(cfg, w)->corrupt, v, "expected netem's corrupt: 'P [CORR]' like '0.1%'");
}

const char *sq_set_error_draws(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	if (strcmp(v, "per_frame") == 0)
		cfg->link.channel.error_draws = SQ_ERROR_DRAWS_PER_FRAME;
	else if (strcmp(v, "by_time") == 0)
		cfg->link.channel.error_draws = SQ_ERROR_DRAWS_BY_TIME;
	else
		return "expected 'per_frame' (Seawind's draws) or 'by_time'";
	return NULL;
}

const char *sq_set_error_grid(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	sq_time_us t;
	if (!sq_parse_duration(v, &t) || t < 1)
		return "expected a duration >= 1us like 1ms (the grid of error draws by time)";
	cfg->link.channel.error_grid = t;
	return NULL;
}

/* --- canonical output ------------------------------------------------------------------ */

static void write_chance(FILE *out, const char *prefix, const char *name, const char *key,
			 const struct sq_netem_chance *ch)
{
	if (ch->p > 0)
		fprintf(out, "%s%s.%s = %.17g %.17g\n", prefix, name, key, ch->p, ch->corr);
}

void sq_netem_write(FILE *out, const char *prefix, const char *name, const struct sq_netem_config *c)
{
	static const char *const models[] = { "", "random", "gemodel", "state" };
	static const int params[] = { 0, 2, 4, 5 };
	if (!sq_netem_enabled(c))
		return;
	if (c->loss_model != SQ_NETEM_LOSS_NONE) {
		fprintf(out, "%s%s.netem_loss = %s", prefix, name, models[c->loss_model]);
		for (int i = 0; i < params[c->loss_model]; i++)
			fprintf(out, " %.17g", c->loss[i]);
		fputc('\n', out);
	}
	fprintf(out, "%s%s.netem_delay = %" PRId64 "us %" PRId64 "us %.17g\n", prefix, name, c->latency_us,
		c->jitter_us, c->delay_corr);
	fprintf(out, "%s%s.netem_distribution = %s\n", prefix, name, dist_names[c->distribution]);
	write_chance(out, prefix, name, "netem_reorder", &c->reorder);
	if (c->gap)
		fprintf(out, "%s%s.netem_gap = %" PRIu32 "\n", prefix, name, c->gap);
	write_chance(out, prefix, name, "netem_duplicate", &c->duplicate);
	write_chance(out, prefix, name, "netem_corrupt", &c->corrupt);
}

void sq_error_draws_write(FILE *out, const char *prefix, const struct sq_channel_config *c)
{
	if (c->error_draws == SQ_ERROR_DRAWS_BY_TIME)
		fprintf(out, "%schannel.error_draws = by_time\n%schannel.error_grid = %" PRId64 "us\n", prefix,
			prefix, c->error_grid);
}
