/*
 * conway-global (seed 000 §3.2.1, conway_gpu.py): the Game of Life on a
 * toroidal board, one generation per conway_ker launch, double-buffered
 * (the two boards swap roles each generation). Every generation is copied
 * back and compared with the CPU's, not only the last.
 *
 *   128       the source's 128 x 128 random board (25% alive), 1000
 *             generations in `full` as the source's animation has frames;
 *   1024      a 1024 x 1024 board, to show the kernel at a larger size;
 *   patterns  a 64 x 64 board holding a blinker and a glider that crosses
 *             the wrap-around edges: on the GPU's own boards the blinker
 *             must have period 2 and the glider must have moved one cell
 *             diagonally every 4 generations.
 */
#include <cuproof/case.h>
#include "../kernels/conway.h"
#include "references.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RANDOM = 0, LARGE, PATTERNS, NVARIANTS };

/* The glider, (x, y) relative to its corner, moving towards +x, +y. */
static const int glider[5][2] = {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
#define GLIDER_AT 56 /* close to the edge of the 64 x 64 board: it wraps */
#define BLINKER_X 10
#define BLINKER_Y 40

typedef struct state {
    int side[NVARIANTS], generations[NVARIANTS];
    int *initial[NVARIANTS];
    int *expected[NVARIANTS]; /* every generation's board, 1 .. generations */
    int *history;             /* page-locked: the GPU's boards, every generation */
    int *dev[2];
    size_t max_cells, max_history;
    int blinker_bad, glider_bad, pattern_boards; /* on the GPU's boards, last run */
} state;

static void teardown(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    if (!s)
        return;
    for (int v = 0; v < NVARIANTS; v++) {
        free(s->initial[v]);
        free(s->expected[v]);
    }
    cudaFree(s->dev[0]);
    cudaFree(s->dev[1]);
    cudaFreeHost(s->history);
}

static size_t cells_of(const state *s, int v)
{
    return (size_t)s->side[v] * (size_t)s->side[v];
}

static int setup(cp_ctx *ctx)
{
    int rc = 0;
    state *s = cp_state_new(ctx, sizeof *s);
    if (!s)
        return CP_ENOMEM;
    bool full = cp_ctx_profile(ctx) == CP_PROFILE_FULL;
    const int sides[NVARIANTS] = {128, 1024, 64};
    const int gens[NVARIANTS] = {full ? 1000 : 100, full ? 20 : 5, 4 * 64};
    uint32_t seed = 31;
    for (int v = 0; v < NVARIANTS; v++) {
        s->side[v] = sides[v];
        s->generations[v] = gens[v];
        size_t cells = cells_of(s, v);
        s->initial[v] = calloc(cells, sizeof(int));
        s->expected[v] = malloc(cells * (size_t)gens[v] * sizeof(int));
        if (!s->initial[v] || !s->expected[v]) {
            rc = CP_ENOMEM;
            goto out;
        }
        if (v == PATTERNS) {
            int n = sides[v];
            for (int i = 0; i < 5; i++)
                s->initial[v][(GLIDER_AT + glider[i][1]) * n + GLIDER_AT + glider[i][0]] = 1;
            for (int dx = -1; dx <= 1; dx++)
                s->initial[v][BLINKER_Y * n + BLINKER_X + dx] = 1;
        } else {
            for (size_t i = 0; i < cells; i++)
                s->initial[v][i] = cp_rand_next(&seed) % 4 == 0;
        }
        const int *prev = s->initial[v];
        for (int g = 0; g < gens[v]; g++) {
            int *cur = s->expected[v] + (size_t)g * cells;
            cp_ref_conway_step(cur, prev, sides[v]);
            prev = cur;
        }
        if (cells > s->max_cells)
            s->max_cells = cells;
        if (cells * (size_t)gens[v] > s->max_history)
            s->max_history = cells * (size_t)gens[v];
    }
    CP_CUDA(cudaMalloc((void **)&s->dev[0], s->max_cells * sizeof(int)));
    CP_CUDA(cudaMalloc((void **)&s->dev[1], s->max_cells * sizeof(int)));
    CP_CUDA(cudaMallocHost((void **)&s->history, s->max_history * sizeof(int)));
    /* Its body only queues (launches and copies into page-locked
     * memory): timed behind the runner's gate where the queue holds it. */
    for (int v = 0; v < NVARIANTS; v++)
        if (2 * s->generations[v] <= CP_TIME_GATE_MAX_OPS)
            CP_TRY(cp_time_gated(ctx, v));
out:
    return rc;
}

static int prepare(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    size_t cells = cells_of(s, v->index);
    CP_CUDA(cudaMemcpy(s->dev[0], s->initial[v->index], cells * sizeof(int),
                       cudaMemcpyHostToDevice));
    CP_CUDA(cudaMemset(s->dev[1], 0xFF, cells * sizeof(int)));
    memset(s->history, 0xFF, cells * (size_t)s->generations[v->index] * sizeof(int));
out:
    return rc;
}

static int run(cp_ctx *ctx, const cp_variant *v)
{
    int rc = 0;
    state *s = cp_ctx_state(ctx);
    int n = s->side[v->index];
    size_t cells = cells_of(s, v->index);
    for (int g = 0; g < s->generations[v->index]; g++) {
        int *in = s->dev[g % 2], *out = s->dev[(g + 1) % 2];
        CP_CUDA(cp_conway_launch(out, in, n, 0));
        CP_CUDA(cudaMemcpyAsync(s->history + (size_t)g * cells, out, cells * sizeof(int),
                                cudaMemcpyDeviceToHost, 0));
    }
out:
    return rc;
}

/* The patterns, judged on the GPU's own boards: the blinker alternates
 * with period 2; at generation 4k the glider is its first shape moved by
 * (k, k), wrapped around the board. */
static void judge_patterns(state *s)
{
    int n = s->side[PATTERNS];
    size_t cells = cells_of(s, PATTERNS);
    s->blinker_bad = s->glider_bad = s->pattern_boards = 0;
    for (int g = 1; g <= s->generations[PATTERNS]; g++) {
        const int *b = s->history + (size_t)(g - 1) * cells;
        bool vertical = g % 2 == 1, blinker_ok = true;
        for (int d = -1; d <= 1; d++) {
            blinker_ok = blinker_ok && b[(BLINKER_Y + (vertical ? d : 0)) * n + BLINKER_X +
                                         (vertical ? 0 : d)] == 1;
        }
        s->blinker_bad += !blinker_ok;
        if (g % 4 == 0) {
            int k = g / 4, live = 0, placed = 0;
            for (size_t i = 0; i < cells; i++)
                live += b[i];
            for (int i = 0; i < 5; i++) {
                int x = (GLIDER_AT + glider[i][0] + k) % n, y = (GLIDER_AT + glider[i][1] + k) % n;
                placed += b[y * n + x];
            }
            /* Five glider cells in place and the blinker's three: nothing else. */
            s->glider_bad += !(placed == 5 && live == 8);
            s->pattern_boards++;
        }
    }
}

static int verify(cp_ctx *ctx, const cp_variant *v, uint64_t *mismatches, uint64_t *elements)
{
    state *s = cp_ctx_state(ctx);
    size_t all = cells_of(s, v->index) * (size_t)s->generations[v->index];
    uint64_t bad = 0;
    for (size_t i = 0; i < all; i++)
        bad += s->history[i] != s->expected[v->index][i];
    if (v->index == PATTERNS)
        judge_patterns(s);
    *mismatches = bad;
    *elements = all;
    return 0;
}

static int checks(cp_ctx *ctx)
{
    state *s = cp_ctx_state(ctx);
    cp_check(ctx, "patterns: the blinker has period 2 on the GPU's boards",
             s->blinker_bad == 0 && s->pattern_boards > 0,
             "vertical on odd generations, horizontal on even ones", "%d of %d boards wrong",
             s->blinker_bad, s->generations[PATTERNS]);
    cp_check(ctx, "patterns: the glider moves one cell diagonally every 4 generations, across "
                  "the edges",
             s->glider_bad == 0 && s->pattern_boards == s->generations[PATTERNS] / 4,
             "at generation 4k, the glider shifted by (k, k) mod 64 and nothing else alive",
             "%d of %d boards wrong", s->glider_bad, s->pattern_boards);
    for (int i = 0; i < NVARIANTS; i++) {
        const char *variant = cp_ctx_variant(ctx, i);
        const cp_variant_result *v = cp_variant_result_get(ctx, variant);
        char name[128], want[64];
        snprintf(name, sizeof name, "%s: one launch per generation", variant);
        snprintf(want, sizeof want, "%d kernels", s->generations[i]);
        cp_check_trace(ctx, variant, name, v && v->metrics.kernels == (uint32_t)s->generations[i],
                       want, "%u kernels", v ? v->metrics.kernels : 0);
        double median = cp_variant_median_ms(ctx, variant);
        if (median > 0) {
            snprintf(name, sizeof name, "%s us per generation", variant);
            cp_figure_add(ctx, name, median * 1e3 / s->generations[i], "us");
        }
    }
    return 0;
}

CUPROOF_CASE(conway_global,
    .title = "Game of Life, one generation per launch, every generation against the CPU",
    .source = "seed 000 §3.2.1 (conway_gpu.py)",
    .variants = CP_VARIANTS("128", "1024", "patterns"),
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .verify = verify,
    .checks = checks,
    .teardown = teardown);
