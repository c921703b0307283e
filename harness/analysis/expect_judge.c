/* A list of expectations judged in one or two streaming passes over a
 * trace (cp_expect_judge in cuproof/expect.h): the whole trace's streaming
 * analysis, and a cp_expect_stream per expectation for its scope. */
#include <cuproof/expect.h>

#include <cuproof/error.h>
#include <cuproof/internal/ranks.h>
#include <cuproof/internal/steps.h>

#include <stdlib.h>
#include <string.h>

struct cp_expect_judge {
    cp_stream *s;
    uint64_t first;
    cp_expect_stream **x;
    size_t nx;
    bool scoped, second, taken;
    cp_metrics m;
    char *ranges[CP_MAX_RANGE_NAMES];
    uint64_t range_count[CP_MAX_RANGE_NAMES]; /* occurrences of each */
    size_t nranges;
    bool more_ranges; /* names past CP_MAX_RANGE_NAMES were seen */
};

/* Range a's name, kept when it is new. */
static int note_range(cp_expect_judge *j, const cp_activity *a)
{
    if (a->kind != CP_ACT_RANGE || !a->name || !a->name[0])
        return 0;
    for (size_t i = 0; i < j->nranges; i++)
        if (strcmp(j->ranges[i], a->name) == 0) {
            j->range_count[i]++;
            return 0;
        }
    if (j->nranges == CP_MAX_RANGE_NAMES) {
        j->more_ranges = true;
        return 0;
    }
    if (!(j->ranges[j->nranges] = strdup(a->name)))
        return cp_failf(CP_ENOMEM, "out of memory for range names");
    j->range_count[j->nranges++] = 1;
    return 0;
}

int cp_expect_judge_new(cp_expect_judge **out, const cp_expect_list *list,
                        const cp_stream_opts *opts)
{
    *out = NULL;
    cp_expect_judge *j = calloc(1, sizeof *j);
    if (!j)
        return cp_failf(CP_ENOMEM, "out of memory");
    j->first = UINT64_MAX;
    int rc = cp_stream_new(&j->s, opts);
    if (rc == 0 && list->n && !(j->x = calloc(list->n, sizeof *j->x)))
        rc = cp_failf(CP_ENOMEM, "out of memory for %zu expectations", list->n);
    for (; rc == 0 && j->nx < list->n; j->nx++) {
        rc = cp_expect_stream_new(&j->x[j->nx], &list->items[j->nx], opts);
        j->scoped = j->scoped || (rc == 0 && !cp_expect_stream_one_pass(j->x[j->nx]));
    }
    if (rc < 0) {
        cp_expect_judge_free(j);
        return rc;
    }
    *out = j;
    return 0;
}

int cp_expect_judge_record(void *judge, const cp_activity *a)
{
    cp_expect_judge *j = judge;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < j->nx; i++)
        rc = j->second ? cp_expect_stream_add(j->x[i], a) : cp_expect_stream_learn(j->x[i], a);
    if (rc < 0 || j->second)
        return rc;
    if (a->start < j->first)
        j->first = a->start;
    if ((rc = note_range(j, a)) < 0)
        return rc;
    return cp_stream_add(j->s, a);
}

int cp_expect_judge_between(cp_expect_judge *j, const cp_trace *meta)
{
    if (meta->has_legacy_stream)
        cp_stream_set_legacy(j->s, meta->legacy_device, meta->legacy_context,
                             meta->legacy_stream);
    int rc = cp_stream_finish(j->s, &j->m);
    for (size_t i = 0; rc == 0 && i < j->nx; i++)
        rc = cp_expect_stream_ready(j->x[i], meta);
    j->second = true;
    return rc;
}

bool cp_expect_judge_second_pass(const cp_expect_judge *j)
{
    return j->scoped;
}

const cp_metrics *cp_expect_judge_metrics(const cp_expect_judge *j)
{
    return &j->m;
}

void cp_expect_judge_put_ranks(cp_expect_judge *j, const cp_ranks *r)
{
    if (!r)
        return;
    cp_ranks_put_metrics(r, &j->m);
    /* The straggler per step rests on each collective's arrival. */
    for (size_t i = 0; i < j->nx; i++)
        cp_expect_stream_set_arrivals(j->x[i], r->arrivals, r->narrivals);
}

uint64_t cp_expect_judge_first(const cp_expect_judge *j)
{
    return j->first;
}

int cp_expect_judge_verdict(cp_expect_judge *j, size_t k, bool *ok, char *measured, size_t len)
{
    if (k >= j->nx || j->taken)
        return cp_failf(CP_EINVAL, "expectation %zu of %zu%s", k, j->nx,
                        j->taken ? ", after the metrics were taken" : "");
    return cp_expect_stream_finish(j->x[k], &j->m, ok, measured, len);
}

uint64_t cp_expect_judge_range_count(const cp_expect_judge *j, size_t k)
{
    return k < j->nranges ? j->range_count[k] : 0;
}

int cp_expect_judge_steps(cp_expect_judge *j, size_t k, cp_step_row **rows, size_t *n, char *why,
                          size_t len)
{
    if (k >= j->nx || !j->second)
        return cp_failf(CP_EINVAL, "expectation %zu of %zu%s", k, j->nx,
                        j->second ? "" : ", before the second pass");
    return cp_expect_stream_steps(j->x[k], rows, n, why, len);
}

size_t cp_expect_judge_ranges(const cp_expect_judge *j, const char *const **names, bool *more)
{
    *names = (const char *const *)j->ranges;
    if (more)
        *more = j->more_ranges;
    return j->nranges;
}

int cp_expect_judge_scope_metrics(cp_expect_judge *j, size_t k, cp_metrics *out, char *why,
                                  size_t len)
{
    if (k >= j->nx || !j->second)
        return cp_failf(CP_EINVAL, "expectation %zu of %zu%s", k, j->nx,
                        j->second ? "" : ", before the second pass");
    return cp_expect_stream_metrics(j->x[k], out, why, len);
}

void cp_expect_judge_take_metrics(cp_expect_judge *j, cp_metrics *out)
{
    *out = j->m;
    memset(&j->m, 0, sizeof j->m);
    j->taken = true;
}

void cp_expect_judge_free(cp_expect_judge *j)
{
    if (!j)
        return;
    cp_stream_free(j->s);
    for (size_t i = 0; i < j->nx; i++)
        cp_expect_stream_free(j->x[i]);
    free(j->x);
    cp_metrics_free(&j->m);
    for (size_t i = 0; i < j->nranges; i++)
        free(j->ranges[i]);
    free(j);
}
