/* Replay helpers that evaluate a case's own expectations on a recording:
 * they need the case's declaration, so their tests link the cases. The
 * metrics they read are analysed here too. */
#include <cuproof/expect.h>
#include <cuproof/internal/tracefile.h>
#include "replay.h"

#include <cuproof/case.h>
#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* The expectations case `name` declares (.expect and .essential), parsed
 * and checked. */
static void load_expectations(const char *name, cp_expect_list *list)
{
    const cp_case_def *def = cp_registry_find(name);
    cr_assert_not_null(def, "case %s is not registered", name);
    cr_assert(def->expect || def->essential, "case %s declares no expectations", name);
    size_t n = 0;
    while (def->variants[n])
        n++;
    if (def->expect)
        cr_assert_eq(cp_expect_parse(def->expect, 1, list), 0, "%s", cp_last_error());
    if (def->essential)
        cr_assert_eq(cp_expect_parse(def->essential, 1, list), 0, "%s", cp_last_error());
    cr_assert_eq(cp_expect_validate(list, def->variants, n), 0, "%s", cp_last_error());
}

size_t replay_expectations(const cp_trace_file *f, const cp_metrics *m, const char *name)
{
    cp_expect_list list = {0};
    load_expectations(name, &list);
    size_t held = 0;
    for (size_t k = 0; k < list.n; k++) {
        const cp_expectation *e = &list.items[k];
        size_t matched = 0;
        for (size_t i = 0; i < f->nvariants; i++) {
            if (e->scope[0] && strcmp(e->scope, f->variants[i].name) != 0)
                continue;
            char measured[96];
            bool ok = cp_expect_eval(e, &m[i], measured, sizeof measured);
            cr_expect(ok, "%s: %s on the recording, measured %s", f->variants[i].name, e->text,
                      measured);
            held += ok;
            matched++;
        }
        cr_expect_gt(matched, 0, "'%s' names no variant of the recording", e->text);
    }
    cr_expect_gt(held, 0);
    cp_expect_list_free(&list);
    return held;
}

size_t replay_expectations_fail_on(const cp_metrics *m, const char *name, const char *from)
{
    cp_expect_list list = {0};
    load_expectations(name, &list);
    size_t failed = 0;
    for (size_t k = 0; k < list.n; k++) {
        char measured[96];
        /* An unscoped expectation applies to `from` as to every variant. */
        const char *scope = list.items[k].scope;
        if (!scope[0] || strcmp(scope, from) == 0)
            failed += !cp_expect_eval(&list.items[k], m, measured, sizeof measured);
    }
    cp_expect_list_free(&list);
    return failed;
}

cp_metrics *replay_analyse(const cp_trace_file *f, const cp_timeline_opts *opts)
{
    cp_metrics *m = calloc(f->nvariants ? f->nvariants : 1, sizeof *m);
    cr_assert_not_null(m);
    for (size_t i = 0; i < f->nvariants; i++)
        cr_assert_eq(cp_timeline_analyse(&f->variants[i].trace, opts, &m[i]), 0, "%s",
                     f->variants[i].name);
    return m;
}

void replay_metrics_free(cp_metrics *m, size_t n)
{
    for (size_t i = 0; m && i < n; i++)
        cp_metrics_free(&m[i]);
    free(m);
}

size_t replay_expectations_analysed(const cp_trace_file *f, const cp_timeline_opts *opts,
                                    const char *name)
{
    cp_metrics *m = replay_analyse(f, opts);
    size_t held = replay_expectations(f, m, name);
    replay_metrics_free(m, f->nvariants);
    return held;
}
