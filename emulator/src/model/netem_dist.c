#include "netem_dist.h"

#include <math.h>

/* netem's tables hold s16 values scaled by 8192 (NETEM_DIST_SCALE). */
#define TABLE_MIN (-32768.0 / 8192.0)
#define TABLE_MAX (32767.0 / 8192.0)

static double clamp_table(double x)
{
	return x < TABLE_MIN ? TABLE_MIN : x > TABLE_MAX ? TABLE_MAX : x;
}

/* Wichura, M.J. (1988), Algorithm AS241 (PPND16), Applied Statistics 37(3): 477-484. */
static double central(double q)
{
	double r = 0.180625 - q * q;
	double num = (((((((2.5090809287301226727e+3 * r + 3.3430575583588128105e+4) * r +
			   6.7265770927008700853e+4) * r + 4.5921953931549871457e+4) * r +
			 1.3731693765509461125e+4) * r + 1.9715909503065514427e+3) * r +
		       1.3314166789178437745e+2) * r + 3.3871328727963666080e+0) * q;
	double den = (((((((5.2264952788528545610e+3 * r + 2.8729085735721942674e+4) * r +
			   3.9307895800092710610e+4) * r + 2.1213794301586595867e+4) * r +
			 5.3941960214247511077e+3) * r + 6.8718700749205790830e+2) * r +
		       4.2313330701600911252e+1) * r + 1.0);
	return num / den;
}

static double tail(double r)
{
	double num, den;
	if (r <= 5.0) {
		r = r - 1.6;
		num = (((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r +
			    2.41780725177450611770e-1) * r + 1.27045825245236838258e+0) * r +
			  3.64784832476320460504e+0) * r + 5.76949722146069140550e+0) * r +
			4.63033784615654529590e+0) * r + 1.42343711074968357734e+0);
		den = (((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r +
			    1.51986665636164571966e-2) * r + 1.48103976427480074590e-1) * r +
			  6.89767334985100004550e-1) * r + 1.67638483018380384940e+0) * r +
			2.05319162663775882187e+0) * r + 1.0);
	} else {
		r = r - 5.0;
		num = (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r +
			    1.24266094738807843860e-3) * r + 2.65321895265761230930e-2) * r +
			  2.96560571828504891230e-1) * r + 1.78482653991729133580e+0) * r +
			5.46378491116411436990e+0) * r + 6.65790464350110377720e+0);
		den = (((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r +
			    1.84631831751005468180e-5) * r + 7.86869131145613259100e-4) * r +
			  1.48753612908506148525e-2) * r + 1.36929880922735805310e-1) * r +
			5.99832206555887937690e-1) * r + 1.0);
	}
	return num / den;
}

double sq_normal_quantile(double u)
{
	double q = u - 0.5;
	if (fabs(q) <= 0.425)
		return central(q);
	double x = tail(sqrt(-log(q <= 0.0 ? u : 1.0 - u)));
	return q < 0.0 ? -x : x;
}

/* iproute2's pareto table: Pareto with shape 3 and scale 1, shifted by its mean 1.5 and
 * scaled by 4/3, indexed so that u = 0 is the smallest value. */
static double pareto(double u)
{
	return (1.0 / pow(1.0 - u, 1.0 / 3.0) - 1.5) * (4.0 / 3.0);
}

double sq_netem_dist_value(enum sq_netem_distribution dist, double u)
{
	switch (dist) {
	case SQ_NETEM_DIST_NORMAL:
		return u <= 0.0 ? TABLE_MIN : clamp_table(sq_normal_quantile(u));
	case SQ_NETEM_DIST_PARETO:
		return clamp_table(pareto(u));
	case SQ_NETEM_DIST_PARETONORMAL: {
		/* iproute2: a quarter normal, three quarters pareto, at the same u */
		double normal = u <= 0.0 ? TABLE_MIN : clamp_table(sq_normal_quantile(u));
		return clamp_table((normal + 3.0 * clamp_table(pareto(u))) / 4.0);
	}
	default:
		return 0.0;   /* uniform has no table: netem_delay.c draws it in whole microseconds */
	}
}
