/*
 * How often compare must say `noisy`, from the spread between runs alone
 * (the aim: "noisy for at most 10%"): synthetic comparisons of one
 * build against itself and against a build 10% slower, through the same
 * functions compare uses (cp_runs_variance, cp_runs_prior_from,
 * cp_compare_runs_prior, threshold 0.10), each run's value drawn
 * log-normally about its variant's truth.
 *
 *   noisy_share                 every variant of a comparison spreading
 *                               alike: a table over spreads and runs a
 *                               side
 *   noisy_share SPREADS [N...]  the variants' spreads read from SPREADS
 *                               (one "NAME SPREAD" a line, SPREAD the sd
 *                               of a run's log value, as compare's
 *                               spread_old/spread_new), N runs a side
 *                               (default 3): what a machine whose passes
 *                               spread so would give
 *
 * Prints, per configuration, the share of variant comparisons that are
 * noisy and the false `slower`/`faster` of the identical builds, and the
 * share called `slower` when the new build is 10% slower. A measurement,
 * not a test: the bound it shows is the statistics', whatever the code
 * around them does.
 */
#include <cuproof/error.h>
#include <cuproof/internal/run_stats.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seeded_rng.h"

#define TRIALS 200
#define MAX_VARIANTS 512
#define MAX_N 16

typedef struct counts {
    long slower, faster, noisy, all;
} counts;

/* TRIALS comparisons of `nv` variants, n runs a side, variant v's runs
 * spreading by spread[v] about 1 ms (old) and `factor` ms (new); each run
 * a within-run relative error of 1%, as a pass of 5 to 50 samples has. */
static int trials(const double *spread, size_t nv, int n, double factor, counts *c)
{
    static double a[MAX_VARIANTS][MAX_N], b[MAX_VARIANTS][MAX_N];
    double ra[MAX_N], rb[MAX_N], vars[MAX_VARIANTS], dfs[MAX_VARIANTS];
    memset(c, 0, sizeof *c);
    for (int i = 0; i < n; i++)
        ra[i] = rb[i] = 0.01;
    for (int t = 0; t < TRIALS; t++) {
        rng_state = 7000003u * (uint64_t)t + 29;
        for (size_t v = 0; v < nv; v++) {
            for (int i = 0; i < n; i++) {
                a[v][i] = exp(spread[v] * normal());
                b[v][i] = factor * exp(spread[v] * normal());
            }
            if (cp_runs_variance(a[v], (size_t)n, b[v], (size_t)n, &vars[v], &dfs[v]) < 0)
                return -1;
        }
        cp_runs_prior prior;
        if (cp_runs_prior_from(vars, dfs, nv, &prior) < 0)
            return -1;
        for (size_t v = 0; v < nv; v++) {
            cp_run_cmp r;
            if (cp_compare_runs_prior(a[v], (size_t)n, b[v], (size_t)n, ra, rb, 0.10,
                                      CP_CMP_MIN_EFFECT, &prior, &r) < 0)
                return -1;
            c->slower += r.verdict == CP_CMP_SLOWER;
            c->faster += r.verdict == CP_CMP_FASTER;
            c->noisy += r.verdict == CP_CMP_NOISY;
            c->all++;
        }
    }
    return 0;
}

/* One line: the identical builds' noisy share and false alarms, and the
 * 10% slower build's share called slower. */
static int report(const char *label, const double *spread, size_t nv, int n)
{
    counts same, slow;
    if (trials(spread, nv, n, 1.0, &same) < 0 || trials(spread, nv, n, 1.10, &slow) < 0) {
        fprintf(stderr, "noisy_share: %s\n", cp_last_error());
        return -1;
    }
    printf("%-22s %3d  %6.1f%%  %6ld  %6.1f%%  %6.1f%%\n", label, n,
           100.0 * (double)same.noisy / (double)same.all, same.slower + same.faster,
           100.0 * (double)slow.slower / (double)slow.all,
           100.0 * (double)slow.noisy / (double)slow.all);
    return 0;
}

static void header(void)
{
    printf("%-22s %3s  %7s  %6s  %7s  %7s\n", "spread between runs", "n", "noisy", "false",
           "10%:slw", "10%:nsy");
}

int main(int argc, char **argv)
{
    if (argc == 1) {
        static const double spreads[] = {0.01, 0.02, 0.03, 0.04, 0.05, 0.06,
                                         0.07, 0.08, 0.10, 0.12, 0.15};
        static const int ns[] = {3, 5, 9};
        double spread[20];
        header();
        for (size_t k = 0; k < sizeof ns / sizeof *ns; k++)
            for (size_t s = 0; s < sizeof spreads / sizeof *spreads; s++) {
                char label[64];
                for (size_t v = 0; v < 20; v++)
                    spread[v] = spreads[s];
                snprintf(label, sizeof label, "all %.0f%% (20 variants)", 100 * spreads[s]);
                if (report(label, spread, 20, ns[k]) < 0)
                    return 1;
            }
        return 0;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "noisy_share: cannot open %s\n", argv[1]);
        return 2;
    }
    static double spread[MAX_VARIANTS];
    size_t nv = 0;
    char name[256];
    double s;
    int line = 0, got;
    while ((got = fscanf(f, "%255s %lf", name, &s)) == 2) {
        line++;
        if (!(s >= 0 && isfinite(s)) || nv == MAX_VARIANTS) {
            fprintf(stderr, "noisy_share: %s:%d: a spread >= 0 (at most %d lines)\n", argv[1],
                    line, MAX_VARIANTS);
            fclose(f);
            return 2;
        }
        spread[nv++] = s;
    }
    fclose(f);
    if (got != EOF || nv < 3) {
        fprintf(stderr, "noisy_share: %s:%d: expected \"NAME SPREAD\" lines, 3 or more\n",
                argv[1], line + 1);
        return 2;
    }
    /* The runs a side to try: those given after SPREADS, else 3. */
    int ns[MAX_N], nns = 0;
    for (int i = 2; i < argc && nns < MAX_N; i++) {
        ns[nns++] = atoi(argv[i]);
        if (ns[nns - 1] < 2 || ns[nns - 1] > MAX_N) {
            fprintf(stderr, "noisy_share: runs a side %s: 2 to %d\n", argv[i], MAX_N);
            return 2;
        }
    }
    if (!nns)
        ns[nns++] = 3;
    header();
    for (int k = 0; k < nns; k++) {
        int n = ns[k];
        char label[64];
        snprintf(label, sizeof label, "%zu variants, measured", nv);
        if (report(label, spread, nv, n) < 0)
            return 1;
    }
    return 0;
}
