/*
 * grid-model (seed 000 §3.1.3): the grid-block-thread model, shown by
 * every thread writing its blockIdx, threadIdx and global index. Variants
 * 1d, 2d and 3d use array sizes that are not multiples of the block, so
 * every dimension ends in an edge block that sticks out of the array.
 *
 * The output is poisoned first, with a poisoned guard region after it:
 * each element must equal the CPU formula, none may be left unwritten, and
 * no thread outside the array may write past its end. The trace must show
 * the launch shape the model predicts, ceil(n / block) blocks per dimension.
 */
#include <cuproof/case.h>
#include "../kernels/grid_model.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_INTS 4096 /* poisoned ints after the array */

typedef struct shape {
    int ci[3], full[3], block[3];
} shape;

/* In the order of .variants. */
static const shape shapes[] = {
    {{100003, 1, 1}, {10000019, 1, 1}, {256, 1, 1}},
    {{1000, 777, 1}, {4001, 3001, 1}, {16, 16, 1}},
    {{100, 37, 21}, {300, 201, 77}, {8, 8, 4}},
};
#define NSHAPES 3

typedef struct state {
    int n[NSHAPES][3];
    size_t ints[NSHAPES]; /* elements * CP_GRID_FIELDS */
    size_t max_ints;
    int *dev, *host, *expected;
    int expected_for; /* the variant whose reference `expected` holds */
    /* The worst over a variant's runs. */
    uint64_t unwritten[NSHAPES], guard_written[NSHAPES];
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    cudaFree(s->dev);
    cudaFreeHost(s->host);
    free(s->expected);
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    for (int v = 0; v < NSHAPES; v++) {
        const int *n = cp_ctx_profile(ctx) == CP_PROFILE_FULL ? shapes[v].full : shapes[v].ci;
        memcpy(s->n[v], n, sizeof s->n[v]);
        s->ints[v] = (size_t)n[0] * n[1] * n[2] * CP_GRID_FIELDS;
        if (s->ints[v] > s->max_ints)
            s->max_ints = s->ints[v];
    }
    s->expected_for = -1;
    size_t bytes = (s->max_ints + GUARD_INTS) * sizeof(int);
    s->expected = malloc(s->max_ints * sizeof(int));
    if (!s->expected) {
        rc = CP_ENOMEM;
        goto out;
    }
    CP_CUDA(cudaMalloc((void **)&s->dev, bytes));
    CP_CUDA(cudaMallocHost((void **)&s->host, bytes));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t bytes = (s->ints[v->index] + GUARD_INTS) * sizeof(int);
    /* -1 everywhere: no field of a written element can be -1. */
    CP_CUDA(cudaMemset(s->dev, 0xFF, bytes));
    memset(s->host, 0, bytes);
    if (s->expected_for != v->index) {
        cp_ref_grid_model(s->expected, s->n[v->index], shapes[v->index].block);
        s->expected_for = v->index;
    }
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    cp_phase_begin(ctx, "compute");
    CP_CUDA(cp_grid_model_launch(s->dev, s->n[v->index], shapes[v->index].block, 0));
    cp_phase_end(ctx);
    cp_phase_begin(ctx, "copy-out");
    CP_CUDA(cudaMemcpy(s->host, s->dev, (s->ints[v->index] + GUARD_INTS) * sizeof(int),
                       cudaMemcpyDeviceToHost));
    cp_phase_end(ctx);
out:
    return rc;
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    size_t ints = s->ints[v->index], count = ints / CP_GRID_FIELDS;
    uint64_t bad = 0, unwritten = 0, guard = 0;
    for (size_t e = 0; e < count; e++) {
        const int *got = s->host + e * CP_GRID_FIELDS, *want = s->expected + e * CP_GRID_FIELDS;
        bad += memcmp(got, want, CP_GRID_FIELDS * sizeof(int)) != 0;
        bool poisoned = true;
        for (int f = 0; f < CP_GRID_FIELDS; f++)
            poisoned = poisoned && got[f] == -1;
        unwritten += poisoned;
    }
    for (size_t i = 0; i < GUARD_INTS; i++)
        guard += s->host[ints + i] != -1;
    if (unwritten > s->unwritten[v->index])
        s->unwritten[v->index] = unwritten;
    if (guard > s->guard_written[v->index])
        s->guard_written[v->index] = guard;
    *mismatches = bad;
    *elements = count;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    for (int i = 0; i < NSHAPES; i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        const int *n = s->n[i], *b = shapes[i].block;
        char name[128], want[96];
        snprintf(name, sizeof name, "%s: no element left unwritten", variant);
        cp_check(ctx, name, s->unwritten[i] == 0, "0 poisoned elements", "%llu",
                 (unsigned long long)s->unwritten[i]);
        snprintf(name, sizeof name, "%s: edge blocks write nothing past the array", variant);
        cp_check(ctx, name, s->guard_written[i] == 0, "guard region untouched",
                 "%llu of %d guard ints changed", (unsigned long long)s->guard_written[i],
                 GUARD_INTS);
        unsigned g[3];
        for (int d = 0; d < 3; d++)
            g[d] = (unsigned)((n[d] + b[d] - 1) / b[d]);
        const cp_activity *k = cp_variant_last_kernel(ctx, variant);
        snprintf(name, sizeof name, "%s: the trace shows the launch the model predicts",
                 variant);
        snprintf(want, sizeof want, "grid (%u, %u, %u) x block (%d, %d, %d)", g[0], g[1], g[2],
                 b[0], b[1], b[2]);
        bool ok = k && k->grid[0] == g[0] && k->grid[1] == g[1] && k->grid[2] == g[2] &&
                  k->block[0] == (unsigned)b[0] && k->block[1] == (unsigned)b[1] &&
                  k->block[2] == (unsigned)b[2];
        cp_check_trace(ctx, variant, name, ok, want, "grid (%u, %u, %u) x block (%u, %u, %u)",
                       k ? k->grid[0] : 0, k ? k->grid[1] : 0, k ? k->grid[2] : 0,
                       k ? k->block[0] : 0, k ? k->block[1] : 0, k ? k->block[2] : 0);
        cp_essential(ctx, name); /* the launch shape is the model under test */
        unsigned long long threads = (unsigned long long)g[0] * g[1] * g[2] * b[0] * b[1] * b[2];
        snprintf(name, sizeof name, "%s threads launched per element", variant);
        cp_figure_add(ctx, name, (double)threads / ((double)n[0] * n[1] * n[2]), "ratio");
    }
    return 0;
}

CUPROOF_CASE(grid_model,
    .title = "Grid, block and thread indices in 1D, 2D and 3D launches with edge blocks",
    .source = "seed 000 §3.1.3",
    .variants = CP_VARIANTS("1d", "2d", "3d"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .teardown = teardown);
