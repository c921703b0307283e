/* Scopes of a traced program: range(NAME) clips device work to the union
 * of the ranges, process(PID) and device(N) filter, a scope without work
 * or without its range fails rather than passes, and validation names
 * line and column. */
#include <cuproof/error.h>
#include <cuproof/expect.h>
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static void add_range(cp_trace *t, uint64_t s, uint64_t e, const char *name)
{
    cp_activity a = {.kind = CP_ACT_RANGE, .start = s, .end = e, .name = name};
    cr_assert_eq(cp_trace_add(t, &a), 0);
}

static void add_on(cp_trace *t, cp_act_kind k, uint64_t s, uint64_t e, uint32_t device,
                   uint32_t process)
{
    cp_activity a = {.kind = k, .start = s, .end = e, .device = device, .process = process,
                     .context = 1, .stream = 7, .name = "x"};
    cr_assert_eq(cp_trace_add(t, &a), 0);
}

static size_t count(const cp_trace *t, cp_act_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->items[i].kind == k;
    return n;
}

/* Whether `t` holds a record of kind k on [s, e). */
static bool holds(const cp_trace *t, cp_act_kind k, uint64_t s, uint64_t e)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].kind == k && t->items[i].start == s && t->items[i].end == e)
            return true;
    return false;
}

/* "step" is [100, 300) (two overlapping ranges and one nested inside
 * them) and [500, 600). */
static void step_trace(cp_trace *t)
{
    cp_trace_init(t);
    add_range(t, 100, 200, "step");
    add_range(t, 150, 300, "step");
    add_range(t, 120, 130, "step");
    add_range(t, 500, 600, "step");
    add_range(t, 0, 1000, "other");
    add_range(t, 700, 700, "instant");
    add_kernel(t, 50, 150, 1, 1);   /* starts before: [100, 150) */
    add_kernel(t, 250, 550, 1, 2);  /* across the gap: [250, 300) and [500, 550) */
    add_kernel(t, 320, 480, 1, 3);  /* in the gap: dropped */
    add_kernel(t, 590, 700, 1, 4);  /* ends after: [590, 600) */
    add_kernel(t, 100, 100, 1, 5);  /* zero length at the start: inside */
    add_kernel(t, 300, 300, 1, 5);  /* zero length at the end: outside */
    add_copy(t, 0, 1000, 1, 6, CP_COPY_HTOD, CP_MEM_PINNED, true);
    cp_activity call = {.kind = CP_ACT_RUNTIME, .start = 0, .end = 10, .name = "cudaLaunchKernel"};
    cr_assert_eq(cp_trace_add(t, &call), 0);
}

Test(scope, range_clips_to_the_union_of_its_ranges)
{
    cp_trace in, out;
    step_trace(&in);
    char why[128] = "unchanged";
    cr_assert_eq(cp_trace_scope(&in, "range", "step", &out, why, sizeof why), 0, "%s", why);
    cr_expect_str_eq(why, "");
    cr_expect_eq(count(&out, CP_ACT_KERNEL), 5);
    cr_expect(holds(&out, CP_ACT_KERNEL, 100, 150));
    cr_expect(holds(&out, CP_ACT_KERNEL, 250, 300));
    cr_expect(holds(&out, CP_ACT_KERNEL, 500, 550));
    cr_expect(holds(&out, CP_ACT_KERNEL, 590, 600));
    cr_expect(holds(&out, CP_ACT_KERNEL, 100, 100));
    cr_expect_not(holds(&out, CP_ACT_KERNEL, 320, 480));
    cr_expect_not(holds(&out, CP_ACT_KERNEL, 300, 300));
    cr_expect_eq(count(&out, CP_ACT_MEMCPY), 2, "a copy over the whole trace: one per piece");
    cr_expect(holds(&out, CP_ACT_MEMCPY, 100, 300));
    cr_expect(holds(&out, CP_ACT_MEMCPY, 500, 600));
    cr_expect_eq(count(&out, CP_ACT_RANGE), 6, "ranges are kept as they are");
    cr_expect(holds(&out, CP_ACT_RANGE, 0, 1000));
    cr_expect(holds(&out, CP_ACT_RUNTIME, 0, 10), "API calls too");
    /* What a piece keeps of its record. */
    for (size_t i = 0; i < out.n; i++)
        if (out.items[i].kind == CP_ACT_KERNEL && out.items[i].start == 500)
            cr_expect_eq(out.items[i].stream, 2);
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(&out, NULL, &m), 0);
    cr_expect_eq(m.kernel_busy_ns, 50 + 50 + 50 + 10, "only time inside the range");
    cr_expect_eq(m.copy_busy_ns, 300);
    /* A record clipped into pieces is still one record: the kernel over
     * the gap [300, 500) and the copy over everything count once. */
    cr_expect_eq(m.kernels, 4, "5 pieces of 4 kernels");
    cr_expect_eq(m.copies, 1, "2 pieces of 1 copy");
    cr_expect_eq(m.kernel_sum_ns, 50 + 50 + 50 + 10, "but every piece's time");
    cr_expect_eq(m.copy_kernel_overlap_ns, 160);
    cp_metrics_free(&m);
    cp_trace_free(&out);

    /* One range over everything keeps everything whole. */
    cr_assert_eq(cp_trace_scope(&in, "range", "other", &out, why, sizeof why), 0);
    cr_expect_eq(count(&out, CP_ACT_KERNEL), 6);
    cr_expect(holds(&out, CP_ACT_KERNEL, 250, 550));
    cr_expect(holds(&out, CP_ACT_MEMCPY, 0, 1000));
    cp_trace_free(&out);

    /* A range of length zero holds no time. */
    cr_assert_eq(cp_trace_scope(&in, "range", "instant", &out, why, sizeof why), 0);
    cr_expect_eq(count(&out, CP_ACT_KERNEL) + count(&out, CP_ACT_MEMCPY), 0);
    cp_trace_free(&out);
    cp_trace_free(&in);
}

/* Ranges of several processes add up, and disjoint ones stay apart. */
Test(scope, ranges_of_several_processes_and_disjoint_ranges)
{
    cp_trace in, out;
    cp_trace_init(&in);
    cp_activity r0 = {.kind = CP_ACT_RANGE, .start = 0, .end = 10, .name = "step", .process = 0};
    cp_activity r1 = {.kind = CP_ACT_RANGE, .start = 10, .end = 20, .name = "step", .process = 1};
    cp_activity r2 = {.kind = CP_ACT_RANGE, .start = 40, .end = 50, .name = "step", .process = 1};
    cr_assert_eq(cp_trace_add(&in, &r0), 0);
    cr_assert_eq(cp_trace_add(&in, &r1), 0);
    cr_assert_eq(cp_trace_add(&in, &r2), 0);
    add_on(&in, CP_ACT_KERNEL, 5, 45, 0, 0);
    add_on(&in, CP_ACT_MEMSET, 25, 35, 0, 1);
    char why[128];
    cr_assert_eq(cp_trace_scope(&in, "range", "step", &out, why, sizeof why), 0);
    cr_expect_eq(count(&out, CP_ACT_KERNEL), 2, "[0, 20) touching pieces merge; [40, 50) apart");
    cr_expect(holds(&out, CP_ACT_KERNEL, 5, 20));
    cr_expect(holds(&out, CP_ACT_KERNEL, 40, 45));
    cr_expect_eq(count(&out, CP_ACT_MEMSET), 0);
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(&out, NULL, &m), 0);
    cr_expect_eq(m.kernels, 1, "one kernel in two pieces");
    cr_expect_eq(m.kernel_busy_ns, 15 + 5);
    cp_metrics_free(&m);
    cp_trace_free(&out);
    cp_trace_free(&in);
}

/* Three processes: pid 10 twice (two hosts) and pid 20. */
static void process_trace(cp_trace *t)
{
    cp_trace_init(t);
    cp_process p = {.pid = 10, .ended = true};
    snprintf(p.host, sizeof p.host, "a");
    cr_assert_eq(cp_trace_add_process(t, &p), 0);
    p.pid = 20;
    cr_assert_eq(cp_trace_add_process(t, &p), 1);
    p.pid = 10;
    snprintf(p.host, sizeof p.host, "b");
    cr_assert_eq(cp_trace_add_process(t, &p), 2);
    add_on(t, CP_ACT_KERNEL, 0, 10, 0, 0);
    add_on(t, CP_ACT_KERNEL, 0, 10, 1, 1);
    add_on(t, CP_ACT_MEMCPY, 5, 15, 1, 2);
    add_on(t, CP_ACT_RUNTIME, 0, 1, 0, 1);
    add_on(t, CP_ACT_RANGE, 0, 20, 0, 2);
    t->dropped_records = 3;
}

Test(scope, process_and_device_filters)
{
    cp_trace in, out;
    process_trace(&in);
    char why[128];
    cr_assert_eq(cp_trace_scope(&in, "process", "10", &out, why, sizeof why), 0, "%s", why);
    cr_expect_eq(out.n, 3, "both processes with pid 10, every kind of record");
    for (size_t i = 0; i < out.n; i++)
        cr_expect_neq(out.items[i].process, 1);
    cr_expect_eq(out.nprocesses, 3, "indices keep their meaning");
    cr_expect_eq(out.processes[1].pid, 20);
    cr_expect_eq(out.dropped_records, 3);
    cp_trace_free(&out);

    cr_assert_eq(cp_trace_scope(&in, "process", "20", &out, why, sizeof why), 0);
    cr_expect_eq(out.n, 2);
    cp_trace_free(&out);

    cr_assert_eq(cp_trace_scope(&in, "device", "1", &out, why, sizeof why), 0, "%s", why);
    cr_expect_eq(count(&out, CP_ACT_KERNEL), 1);
    cr_expect_eq(count(&out, CP_ACT_MEMCPY), 1);
    cr_expect_eq(count(&out, CP_ACT_RUNTIME) + count(&out, CP_ACT_RANGE), 2,
                 "host records belong to no device and stay");
    cp_trace_free(&out);

    /* No scope: a copy. */
    cr_assert_eq(cp_trace_scope(&in, "", NULL, &out, why, sizeof why), 0);
    cr_expect_eq(out.n, in.n);
    cr_expect_eq(out.nprocesses, 3);
    cr_expect_str_eq(out.processes[2].host, "b");
    cp_trace_free(&out);
    cp_trace_free(&in);
}

static void expect_scope_error(const cp_trace *in, const char *scope, const char *arg, int code,
                               const char *needle)
{
    cp_trace out;
    char why[160] = "";
    cr_expect_eq(cp_trace_scope(in, scope, arg, &out, why, sizeof why), code, "%s(%s)", scope,
                 arg ? arg : "");
    cr_expect_not_null(strstr(why, needle), "why '%s' lacks '%s'", why, needle);
    cr_expect_not_null(strstr(cp_last_error(), needle), "%s", cp_last_error());
    cr_expect_eq(out.n, 0);
    cr_expect_eq(out.nprocesses, 0);
    cr_expect_null(out.items);
}

Test(scope, missing_and_unknown_scopes)
{
    cp_trace in;
    process_trace(&in);
    expect_scope_error(&in, "range", "step", CP_ENOENT, "no range named 'step' in the trace");
    expect_scope_error(&in, "process", "1234", CP_ENOENT, "no process 1234 in the trace");
    expect_scope_error(&in, "device", "2", CP_ENOENT, "no device 2 in the trace");
    expect_scope_error(&in, "process", "abc", CP_EINVAL, "process(abc): the pid must be a decimal");
    expect_scope_error(&in, "device", "-1", CP_EINVAL, "device(-1): the device must be");
    expect_scope_error(&in, "device", "4294967296", CP_EINVAL, "the device must be");
    expect_scope_error(&in, "thread", "1", CP_EINVAL, "unknown scope 'thread(1)'");
    expect_scope_error(&in, "streams-pinned", NULL, CP_EINVAL,
                       "'streams-pinned' is not a scope of a traced program");
    /* A case's trace has no processes at all. */
    cp_trace bare;
    step_trace(&bare);
    expect_scope_error(&bare, "process", "10", CP_ENOENT, "no process 10 in the trace");
    cp_trace_free(&bare);
    /* why may be left out. */
    cp_trace out;
    cr_expect_eq(cp_trace_scope(&in, "range", "nope", &out, NULL, 0), CP_ENOENT);
    cp_trace_free(&in);
}

static cp_expectation parse_one(cp_expect_list *list, const char *text)
{
    cp_expect_list_free(list);
    cr_assert_eq(cp_expect_parse(text, 1, list), 0, "%s", cp_last_error());
    cr_assert_eq(list->n, 1);
    return list->items[0];
}

/* Evaluates `text` on `t`: whether it held, and what was measured. */
static bool eval(const cp_trace *t, const char *text, char *measured, size_t len)
{
    cp_expect_list list = {0};
    cp_expectation e = parse_one(&list, text);
    bool ok = true;
    cr_assert_eq(cp_expect_eval_trace(&e, t, NULL, &ok, measured, len), 0, "%s: %s", text,
                 cp_last_error());
    cp_expect_list_free(&list);
    return ok;
}

Test(scope, expectations_on_a_scoped_trace)
{
    cp_trace t;
    step_trace(&t);
    char measured[160];
    cr_expect(eval(&t, "kernels == 6", measured, sizeof measured), "%s", measured);
    /* Four kernels touch the steps; the one over the gap between two steps
     * is one kernel, not one per piece. */
    cr_expect(eval(&t, "range(step): kernels == 4", measured, sizeof measured), "%s", measured);
    cr_expect(eval(&t, "range(step): kernel_busy_ns == 160", measured, sizeof measured), "%s",
              measured);
    cr_expect_not(eval(&t, "range(step): kernel_busy_ns > 160", measured, sizeof measured));
    cr_expect_str_eq(measured, "160 ns");
    cr_expect(eval(&t, "range(other): no finding cuda_memcpy_async", measured, sizeof measured),
              "%s", measured);
    /* Nothing passes for want of work or of its scope. */
    cr_expect_not(eval(&t, "range(instant): kernels >= 0", measured, sizeof measured));
    cr_expect_str_eq(measured, "no kernels, copies or memsets inside range 'instant'");
    cr_expect_not(eval(&t, "range(instant): no finding gpu_gaps", measured, sizeof measured));
    cr_expect_not(eval(&t, "range(missing): kernels >= 0", measured, sizeof measured));
    cr_expect_str_eq(measured, "no range named 'missing' in the trace");
    cr_expect_not(eval(&t, "process(4): kernels >= 0", measured, sizeof measured));
    cr_expect_str_eq(measured, "no process 4 in the trace");
    cr_expect_not(eval(&t, "device(3): kernels >= 0", measured, sizeof measured));
    cr_expect_str_eq(measured, "no device 3 in the trace");
    cp_trace_free(&t);

    cp_trace empty;
    cp_trace_init(&empty);
    cr_expect_not(eval(&empty, "span_ns >= 0", measured, sizeof measured));
    cr_expect_str_eq(measured, "no kernels, copies or memsets in the trace");
    process_trace(&t);
    cr_expect(eval(&t, "device(0): kernels == 1", measured, sizeof measured), "%s", measured);
    cr_expect(eval(&t, "process(10): copies == 1", measured, sizeof measured), "%s", measured);
    cr_expect_not(eval(&t, "process(20): copies == 1", measured, sizeof measured));
    cr_expect_str_eq(measured, "0 copies");
    /* A scope that validation refuses is the caller's error. */
    cp_expect_list list = {0};
    cp_expectation e = parse_one(&list, "sync: kernels > 1");
    bool ok = true;
    cr_expect_eq(cp_expect_eval_trace(&e, &t, NULL, &ok, measured, sizeof measured), CP_EINVAL);
    cr_expect_not(ok);
    cp_expect_list_free(&list);
    cp_trace_free(&t);
}

static void expect_invalid(const char *text, const char *needle)
{
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse(text, 1, &list), 0, "%s", cp_last_error());
    cr_expect_eq(cp_expect_validate_program(&list), CP_EINVAL, "accepted: %s", text);
    cr_expect_not_null(strstr(cp_last_error(), needle), "error '%s' lacks '%s'", cp_last_error(),
                       needle);
    cp_expect_list_free(&list);
}

Test(scope, validate_program)
{
    cp_expect_list list = {0};
    cr_assert_eq(cp_expect_parse("kernels > 1\n"
                                 "range(step): copy_kernel_overlap_ratio >= 0.4\n"
                                 "range( a long name ): finding gpu_gaps\n"
                                 "process(4242): no finding cuda_memcpy_async\n"
                                 "device(0): peak_concurrent_kernels > 1\n",
                                 1, &list),
                 0, "%s", cp_last_error());
    cr_expect_eq(cp_expect_validate_program(&list), 0, "%s", cp_last_error());
    cp_expect_list_free(&list);

    expect_invalid("streams-pinned: kernels > 1",
                   "line 1, column 1: 'streams-pinned' is not a scope of a traced program");
    expect_invalid("\n\n  process(abc): kernels > 1",
                   "line 3, column 3: process(abc): the pid must be a decimal integer");
    expect_invalid("device(1.5): kernels > 1", "line 1, column 1: device(1.5): the device must");
    expect_invalid("thread(1): kernels > 1",
                   "line 1, column 1: unknown scope 'thread(1)' "
                   "(scopes: range(NAME), process(PID), device(N), collective(OP))");
    /* A misspelt scope is answered with the one meant. */
    expect_invalid("rnage(step): kernels > 1",
                   "line 1, column 1: unknown scope 'rnage(step)' (did you mean 'range'?)");
    expect_invalid("devcie(0): kernels > 1", "unknown scope 'devcie(0)' (did you mean 'device'?)");
    expect_invalid("kernels > 1\nrange(step): kernelz > 1",
                   "line 2, column 14: unknown metric 'kernelz'");
    expect_invalid("process(1): finding gpu_gapz", "line 1, column 21: unknown finding 'gpu_gapz'");
}
