/* The JSON contract (parsed back with cJSON), the HTML view, and trace
 * files: round trip and malformed input. */
#include <cuproof/internal/file.h>
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/report.h>
#include <cuproof/internal/session.h>
#include <cuproof/error.h>
#include <cuproof/units.h>
#include "helpers.h"
#include "reports/json.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static cp_report rep;
static cp_case_result cases[2];

static void build(void)
{
    memset(&rep, 0, sizeof rep);
    memset(cases, 0, sizeof cases);
    strcpy(rep.tool_version, "0.1.0");
    strcpy(rep.date, "2026-11-22T00:00:00Z");
    strcpy(rep.profile, "ci");
    rep.repeat = 3;
    rep.traced = true;
    rep.env.has_device = true;
    strcpy(rep.env.gpu_name, "Test GPU <&>");
    rep.env.cc_major = 9;
    rep.env.sm_count = 132;
    rep.env.copy_engines = 3;

    cp_case_result *c = &cases[0];
    strcpy(c->name, "demo");
    strcpy(c->title, "a demo");
    strcpy(c->source, "seed 000");
    c->status = CP_STATUS_PASSED;
    cr_assert_not_null(cp_result_add_check(c));
    cr_assert_not_null(cp_result_add_check(c));
    strcpy(c->checks[0].name, "overlap");
    strcpy(c->checks[0].expected, "> 0.5");
    strcpy(c->checks[0].measured, "0.9");
    c->checks[1].status = CP_CHECK_SKIPPED;
    strcpy(c->checks[1].name, "trace check");
    strcpy(c->checks[1].skip_reason, "untraced");
    cr_assert_not_null(cp_result_add_variant(c));
    cr_assert_not_null(cp_result_add_variant(c));
    cp_variant_result *v = &c->variants[0];
    strcpy(v->name, "streams");
    v->ran = v->traced = true;
    v->timing = (cp_timing){.runs = 3, .median_ms = 2, .min_ms = 1, .max_ms = 3};
    v->samples_ms = malloc(3 * sizeof *v->samples_ms);
    cr_assert_not_null(v->samples_ms);
    v->samples_ms[0] = 1;
    v->samples_ms[1] = 3;
    v->samples_ms[2] = 2;
    v->nsamples = 3;
    v->clocks_before = (cp_clocks){.known = true, .sm_mhz = 1980, .mem_mhz = 2619};
    snprintf(v->clocks_after.reason, sizeof v->clocks_after.reason, "NVML unavailable");
    cp_trace_init(&v->trace);
    add_kernel(&v->trace, 0, 100, 1, 1);
    add_kernel(&v->trace, 50, 150, 1, 2);
    add_copy(&v->trace, 0, 60, 1, 3, CP_COPY_HTOD, CP_MEM_PAGEABLE, true);
    cp_activity range = {.kind = CP_ACT_RANGE, .start = 0, .end = 10, .depth = 2,
                         .name = "copy-in"};
    cp_trace_add(&v->trace, &range);
    cr_assert_eq(cp_timeline_analyse(&v->trace, NULL, &v->metrics), 0);
    const double events[3] = {1.0, 2.0, 3.0};
    cr_assert_eq(cp_series_store(&v->series, &v->nseries, &v->series_cap, "event_ms", "ms", events, 3), 0);
    strcpy(c->variants[1].name, "untraced");
    c->variants[1].ran = true;
    strcpy(c->variants[1].untraced_reason, "CUPTI is held by another tool");
    cr_assert_not_null(cp_result_add_claim(c));
    strcpy(c->claims[0].text, "about 4x");
    strcpy(c->claims[0].measured, "50x");
    c->claims[0].verdict = CP_VERDICT_CONFIRMED;
    cr_assert_not_null(cp_result_add_figure(c));
    strcpy(c->figures[0].name, "speedup");
    c->figures[0].value = 50;

    cp_case_result *s = &cases[1];
    strcpy(s->name, "skipped-case");
    s->status = CP_STATUS_SKIPPED;
    strcpy(s->skip_reason, "no CUDA device");
    rep.cases = cases;
    rep.ncases = 2;
}

static void destroy(void)
{
    cp_case_result_free(&cases[0]);
}

TestSuite(report, .init = build, .fini = destroy);

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert_not_null(v, "field '%s' missing", k);
    return v;
}

Test(report, json_has_every_contract_field)
{
    cJSON *built = cp_report_to_json(&rep);
    cr_assert_not_null(built);
    char *text = cJSON_Print(built);
    cJSON_Delete(built);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root, "the writer's output does not parse");

    cr_expect_str_eq(get(root, "schema")->valuestring, "cuproof.report/1");
    get(get(root, "tool"), "version");
    const cJSON *env = get(root, "environment");
    const char *env_fields[] = {"gpu_name", "compute_capability", "sm_count", "copy_engines",
                                "driver_version", "runtime_version", "host"};
    for (size_t i = 0; i < sizeof env_fields / sizeof *env_fields; i++)
        get(env, env_fields[i]);
    cr_expect_str_eq(get(env, "compute_capability")->valuestring, "9.0");
    cr_expect_str_eq(get(root, "profile")->valuestring, "ci");

    const cJSON *cs = get(root, "cases");
    cr_assert_eq(cJSON_GetArraySize(cs), 2);
    const cJSON *c = cJSON_GetArrayItem(cs, 0);
    const char *case_fields[] = {"name", "title", "source", "status", "skip_reason", "checks",
                                 "variants", "claims"};
    for (size_t i = 0; i < sizeof case_fields / sizeof *case_fields; i++)
        get(c, case_fields[i]);
    cr_expect_str_eq(get(c, "status")->valuestring, "passed");

    const cJSON *k0 = cJSON_GetArrayItem(get(c, "checks"), 0);
    cr_expect(cJSON_IsTrue(get(k0, "ok")));
    get(k0, "expected");
    get(k0, "measured");
    const cJSON *k1 = cJSON_GetArrayItem(get(c, "checks"), 1);
    cr_expect(cJSON_IsNull(get(k1, "ok")), "a skipped check is neither passed nor failed");
    cr_expect_str_eq(get(k1, "status")->valuestring, "skipped");

    const cJSON *v = cJSON_GetArrayItem(get(c, "variants"), 0);
    const cJSON *timing = get(v, "timing");
    const char *tf[] = {"runs", "median_ms", "min_ms", "max_ms", "stddev_ms"};
    for (size_t i = 0; i < 5; i++)
        get(timing, tf[i]);
    /* 1.1: the timed runs themselves, in run order, and the clocks. */
    const cJSON *samples = get(timing, "samples_ms");
    cr_assert_eq(cJSON_GetArraySize(samples), 3);
    cr_expect_float_eq(cJSON_GetArrayItem(samples, 1)->valuedouble, 3.0, 1e-12);
    cr_expect_str_eq(get(timing, "clock")->valuestring, "CLOCK_MONOTONIC");
    cr_expect_eq(get(get(v, "clocks_before"), "sm_mhz")->valueint, 1980);
    cr_expect_str_eq(get(get(v, "clocks_after"), "reason")->valuestring, "NVML unavailable");
    cr_expect_str_eq(get(root, "schema_version")->valuestring, "1.18");
    get(get(root, "environment"), "gpu_uuid");
    get(get(root, "environment"), "cpu_model");
    const cJSON *tr = get(v, "trace");
    const char *mf[] = {"span_ns", "kernel_busy_ns", "copy_busy_ns", "copy_kernel_overlap_ns",
                        "copy_kernel_overlap_ratio", "h2d_d2h_overlap_ns",
                        "peak_concurrent_kernels", "mean_concurrent_kernels", "idle_ns",
                        "largest_gap_ns", "streams", "pageable_copies", "findings",
                        "dropped_records", "renamed_kernels"};
    for (size_t i = 0; i < sizeof mf / sizeof *mf; i++)
        get(tr, mf[i]);
    cr_expect_eq(get(tr, "peak_concurrent_kernels")->valueint, 2);
    cr_expect_eq(cJSON_GetArraySize(get(tr, "streams")), 3);
    /* 1.5: each device's own metrics; this trace has one device, whose
     * figures are the program's. */
    const cJSON *pd = get(tr, "per_device");
    cr_assert_eq(cJSON_GetArraySize(pd), get(tr, "devices")->valueint);
    const cJSON *d0 = cJSON_GetArrayItem(pd, 0);
    cr_expect_eq(get(d0, "peak_concurrent_kernels")->valueint, 2);
    cr_expect_eq(get(d0, "kernel_busy_ns")->valuedouble, get(tr, "kernel_busy_ns")->valuedouble);
    cr_expect_eq(get(d0, "copy_kernel_overlap_ratio")->valuedouble,
                 get(tr, "copy_kernel_overlap_ratio")->valuedouble);
    get(d0, "idle_ns");
    get(d0, "efficiency");
    const cJSON *f = cJSON_GetArrayItem(get(tr, "findings"), 0);
    cr_expect_str_eq(get(f, "name")->valuestring, "cuda_memcpy_async");
    const cJSON *sr = cJSON_GetArrayItem(get(v, "series"), 0);
    cr_expect_str_eq(get(sr, "name")->valuestring, "event_ms");
    cr_expect_float_eq(get(sr, "mean")->valuedouble, 2.0, 1e-12);
    cr_expect_eq(cJSON_GetArraySize(get(sr, "values")), 3);

    const cJSON *v1 = cJSON_GetArrayItem(get(c, "variants"), 1);
    cr_expect(cJSON_IsNull(get(v1, "trace")));
    cr_expect_str_eq(get(v1, "untraced_reason")->valuestring, "CUPTI is held by another tool");

    const cJSON *cl = cJSON_GetArrayItem(get(c, "claims"), 0);
    const char *cf[] = {"text", "source", "claimed", "measured", "verdict", "reason"};
    for (size_t i = 0; i < 6; i++)
        get(cl, cf[i]);
    cr_expect_str_eq(get(cl, "verdict")->valuestring, "confirmed");

    const cJSON *s = cJSON_GetArrayItem(cs, 1);
    cr_expect_str_eq(get(s, "status")->valuestring, "skipped");
    cr_expect_str_eq(get(s, "skip_reason")->valuestring, "no CUDA device");
    cJSON_Delete(root);
}

/* 1.15: under exec --capture the report says what was traced and what
 * not; without it there is no capture object. */
Test(report, tracing_cost_says_what_capture_traced)
{
    cp_report r = rep;
    r.has_tracing_cost = true;
    for (int with = 0; with < 2; with++) {
        r.has_capture = with;
        snprintf(r.capture, sizeof r.capture, "range:step@1001-1050");
        r.capture_windows = 1;
        r.capture_window_ms = 75.5;
        r.capture_program_ms = 4500.0;
        r.capture_list[0] = (struct cp_report_window){4242, 1001, 3100.0, 75.5};
        r.ncapture_list = 1;
        cJSON *root = cp_report_to_json(&r);
        cr_assert_not_null(root);
        const cJSON *c = cJSON_GetObjectItem(get(root, "tracing_cost"), "capture");
        if (!with) {
            cr_expect_null(c);
        } else {
            cr_assert_not_null(c);
            cr_expect_str_eq(get(c, "spec")->valuestring, "range:step@1001-1050");
            cr_expect_eq(get(c, "windows")->valueint, 1);
            cr_expect_float_eq(get(c, "window_ms")->valuedouble, 75.5, 1e-9);
            cr_expect_float_eq(get(c, "outside_ms")->valuedouble, 4424.5, 1e-9);
            const cJSON *w = cJSON_GetArrayItem(get(c, "list"), 0);
            cr_assert_not_null(w);
            cr_expect_eq(get(w, "pid")->valueint, 4242);
            cr_expect_eq(get(w, "first_occurrence")->valueint, 1001);
            cr_expect_float_eq(get(w, "length_ms")->valuedouble, 75.5, 1e-9);
        }
        cJSON_Delete(root);
    }
}

Test(report, html_escapes_and_shows_everything)
{
    char *html = cp_report_html(&rep);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, "Test GPU &lt;&amp;&gt;"), "names are escaped");
    cr_expect_null(strstr(html, "Test GPU <&>"));
    cr_expect_not_null(strstr(html, "Asynchronous copy from pageable memory"),
                       "a finding by its label");
    cr_expect_null(strstr(html, ">cuda_memcpy_async"), "not by its identifier");
    cr_expect_not_null(strstr(html, "no CUDA device"));
    cr_expect_not_null(strstr(html, "CUPTI is held by another tool"));
    cr_expect_not_null(strstr(html, "Measured by the run itself"), "series are shown");
    cr_expect_not_null(strstr(html, "<p class=\"headline "), "each case has its headline");
    cr_expect_not_null(strstr(html, "<th>What it showed</th>"), "and so does the index");
    cr_expect_not_null(strstr(html, "data-passed=\""), "the counts, for the browser test");
    cr_expect_not_null(strstr(html, "class=\"timeline\" id=\"tl-demo-streams\""),
                       "a timeline for the traced variant");
    cr_expect_null(strstr(html, "tl-demo-untraced"), "none for the untraced one");
    cr_expect_not_null(strstr(html, "<td>event (ms)</td><td>3</td><td>2</td>"), "%s",
                       strstr(html, "Measured by the run itself"));
    cr_expect_not_null(strstr(html, "confirmed"));
    cr_expect_null(strstr(html, "http"), "the page fetches nothing");
    free(html);
}

/* report.html's timeline labels a named stream's lane "NAME (stream N)",
 * the name escaped inside the page's JSON (quotes, '<', '&', '>': no
 * "</script>" can end it), and every other lane by its number: a stream
 * of the same number in another process, and one of another device's
 * whose name in the table belongs to a device it did not run on, keep
 * "stream N". */
Test(report, html_lane_labels_name_streams_and_only_theirs)
{
    cp_variant_result *v = &cases[0].variants[0];
    cp_process procs[2] = {{.pid = 4242, .ended = true}, {.pid = 4250, .ended = true}};
    cr_assert_eq(cp_trace_add_process(&v->trace, &procs[0]), 0);
    cr_assert_eq(cp_trace_add_process(&v->trace, &procs[1]), 1);
    /* Process 0's kernels run on streams 1 and 2 of device 0 (build());
     * process 1 gets a kernel on stream 1 of device 0 and one on device 1. */
    cp_activity k = {.kind = CP_ACT_KERNEL, .start = 20, .end = 40, .context = 1, .stream = 1,
                     .process = 1, .name = "k"};
    cr_assert_eq(cp_trace_add(&v->trace, &k), 0);
    k.device = 1;
    cr_assert_eq(cp_trace_add(&v->trace, &k), 0);
    cr_assert_eq(cp_trace_name_stream(&v->trace, &(cp_stream_name){0, 0, 1, 1,
                                                                   "copy \"in\" </script><&>"}),
                 0);
    cr_assert_eq(cp_trace_name_stream(&v->trace, &(cp_stream_name){1, 0, 1, 2, "not mine"}), 0);
    cr_assert_eq(cp_trace_name_stream(&v->trace, &(cp_stream_name){0, 1, 1, 1, "no work"}), 0);
    cp_metrics_free(&v->metrics);
    cr_assert_eq(cp_timeline_analyse(&v->trace, NULL, &v->metrics), 0);
    char *html = cp_report_html(&rep);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, "\"GPU 0 pid 4242 ctx 1 copy \\\"in\\\" \\u003c/script\\u003e"
                                    "\\u003c\\u0026\\u003e (stream 1)\""),
                       "the named lane, escaped");
    cr_expect_null(strstr(html, "copy \"in\""), "the name never unescaped");
    cr_expect_null(strstr(html, "</script><&>"));
    cr_expect_not_null(strstr(html, "\"GPU 0 pid 4242 ctx 1 stream 2\""),
                       "process 0's stream 2: 4250's name is not its");
    cr_expect_not_null(strstr(html, "\"GPU 0 pid 4250 ctx 1 stream 1\""),
                       "4250's stream 1 keeps its number");
    cr_expect_not_null(strstr(html, "\"GPU 1 pid 4250 ctx 1 stream 1\""),
                       "and so does its stream 1 on device 1");
    cr_expect_null(strstr(html, "not mine"));
    cr_expect_null(strstr(html, "no work"));
    free(html);
}

/* A traced variant with a kernel on each of `streams` streams. */
static void traced_variant(cp_case_result *c, const char *name, double ms, uint32_t streams)
{
    cp_variant_result *v = cp_result_add_variant(c);
    cr_assert_not_null(v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->ran = v->traced = true;
    v->timing = (cp_timing){.runs = 3, .median_ms = ms, .min_ms = ms, .max_ms = ms};
    cp_trace_init(&v->trace);
    for (uint32_t k = 0; k < streams; k++)
        add_kernel(&v->trace, 0, 100, 1, k + 1);
    cr_assert_eq(cp_timeline_analyse(&v->trace, NULL, &v->metrics), 0);
}

/* The page leads with its findings: the key findings right after the
 * verdict counts, a link to its case per line; the failed case first,
 * then the one with a finding, then the rest, whatever the run's order;
 * passed checks folded under a line that counts them, failed ones open; a
 * timeline of many lanes folded, a short one open. */
Test(report, html_leads_with_its_findings)
{
    cp_case_result cs[3] = {{.status = CP_STATUS_PASSED}, {.status = CP_STATUS_PASSED},
                            {.status = CP_STATUS_FAILED}};
    strcpy(cs[0].name, "quiet");
    strcpy(cs[1].name, "streams");
    strcpy(cs[2].name, "broken");
    for (int i = 0; i < 6; i++) {
        cp_check_result *k = cp_result_add_check(&cs[0]);
        cr_assert_not_null(k);
        snprintf(k->name, sizeof k->name, "check %d", i);
    }
    traced_variant(&cs[0], "one", 1, 1);
    strcpy(cs[1].baseline, "sync");
    traced_variant(&cs[1], "sync", 20, 1);
    traced_variant(&cs[1], "many", 2, 20);
    cp_check_result *k = cp_result_add_check(&cs[2]);
    cr_assert_not_null(k);
    strcpy(k->name, "output equals the reference");
    k->status = CP_CHECK_FAILED;
    cp_report r = rep;
    r.cases = cs;
    r.ncases = 3;
    char *html = cp_report_html(&r);
    cr_assert_not_null(html);
    const char *counts = strstr(html, "data-passed=\"");
    const char *key = strstr(html, "<section id=\"key-findings\">");
    const char *index = strstr(html, "<h2>Cases</h2>");
    cr_assert(counts && key && index && counts < key && key < index,
              "the findings sit between the counts and the cases");
    const char *end = strstr(key, "</section>");
    cr_assert_not_null(end);
    size_t items = 0, linked = 0;
    for (const char *p = key; (p = strstr(p, "<li")) && p < end; p++) {
        items++;
        linked += !strncmp(strchr(p, '>') + 1, "<a href=\"#case-", 15);
    }
    cr_expect_eq(items, 2, "broken's failure and streams' 10x");
    cr_expect_eq(linked, items, "each finding links to its case");
    cr_expect_not_null(strstr(key, "<a href=\"#case-broken\">broken</a>: Failed: 1 of 1 check"));
    cr_expect_not_null(strstr(key, "<a href=\"#case-streams\">streams</a>: the largest speedup "
                                   "against a baseline: many ran 10.0× faster than sync"));
    /* Sections and index rows by interest. */
    const char *b = strstr(html, "<section id=\"case-broken\""),
               *s = strstr(html, "<section id=\"case-streams\""),
               *q = strstr(html, "<section id=\"case-quiet\"");
    cr_expect(b && s && q && b < s && s < q, "failed, then with findings, then the rest");
    b = strstr(index, "href=\"#case-broken\"");
    s = strstr(index, "href=\"#case-streams\"");
    q = strstr(index, "href=\"#case-quiet\"");
    cr_expect(b && s && q && b < s && s < q, "the index in the same order");
    /* Checks: folded with a count, open where one failed. */
    cr_expect_not_null(strstr(html, "<details class=\"checks\" data-checks-failed=\"0\"><summary><h3>"
                                    "Checks</h3> 6 checks, <span class=\"passed\">0 failed</span>"),
                       "%s", html);
    cr_expect_not_null(strstr(html, "<details class=\"checks\" data-checks-failed=\"1\" open><summary>"
                                    "<h3>Checks</h3> 1 check, <span class=\"failed\">1 failed"));
    /* Timelines: 20 lanes folded, 1 open. */
    cr_expect_not_null(strstr(html, "<details class=\"tl\"><summary><h4>many <small>20 lanes"));
    cr_expect_not_null(strstr(html, "<details class=\"tl\" open><summary><h4>sync <small>1 lane "));
    free(html);
    for (int i = 0; i < 3; i++)
        cp_case_result_free(&cs[i]);
}

Test(report, write_creates_both_files)
{
    char dir[] = "/tmp/cuproof-report-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(cp_report_write(&rep, dir), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *json = cp_read_file(path);
    cr_assert_not_null(json);
    cJSON *root = cJSON_Parse(json);
    cr_expect_not_null(root);
    cJSON_Delete(root);
    free(json);
    remove(path);
    snprintf(path, sizeof path, "%s/report.html", dir);
    cr_expect_eq(access(path, R_OK), 0);
    remove(path);
    rmdir(dir);
}

Test(report, write_to_missing_directory_names_the_file)
{
    cr_expect_eq(cp_report_write(&rep, "/nonexistent-cuproof-dir"), CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "/nonexistent-cuproof-dir/report.json"));
}

/* The files are written side by side (reports/jobs.h): one that cannot be
 * written (a directory stands in its place) is named in the error, and
 * the others are written all the same; the trace sink's merged trace and
 * Perfetto file alike. */
Test(report, files_written_side_by_side_each_name_their_failure)
{
    static const char *const blocked[] = {"report.json", "report.html"};
    for (int i = 0; i < 2; i++) {
        char dir[] = "/tmp/cuproof-report-XXXXXX", path[256], other[256], cmd[300];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/%s", dir, blocked[i]);
        snprintf(other, sizeof other, "%s/%s", dir, blocked[1 - i]);
        cr_assert_eq(mkdir(path, 0755), 0);
        cr_expect_eq(cp_report_write(&rep, dir), CP_EIO);
        cr_expect_not_null(strstr(cp_last_error(), path), "%s", cp_last_error());
        cr_expect_eq(access(other, R_OK), 0, "%s was not written beside the failure", other);
        /* The trace sink: DEMO.trace.json blocked, the Perfetto file written. */
        snprintf(path, sizeof path, "%s/demo.trace.json", dir);
        if (i == 0)
            cr_assert_eq(mkdir(path, 0755), 0);
        cp_sink sink = cp_sink_traces(dir);
        cr_assert_not_null(sink.name);
        int rc = sink.add_case(sink.data, &rep, &cases[0]);
        sink.release(sink.data);
        snprintf(other, sizeof other, "%s/demo.streams.perfetto.json", dir);
        if (i == 0) {
            cr_expect_eq(rc, CP_EIO);
            cr_expect_not_null(strstr(cp_last_error(), path), "%s", cp_last_error());
        } else {
            cr_expect_eq(rc, 0, "%s", cp_last_error());
        }
        cr_expect_eq(access(other, R_OK), 0, "%s was not written", other);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        cr_expect_eq(system(cmd), 0);
    }
}

Test(report, trace_file_round_trip)
{
    char path[] = "/tmp/cuproof-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cases[0].variants[0].trace.renamed_kernels = 2;
    /* A traced program's: two processes, records that name them, and work
     * launched by a CUDA graph. */
    cp_trace *pt = &cases[0].variants[0].trace;
    cp_process procs[2] = {
        {.pid = 4242, .ppid = 1, .ended = true, .last_ns = 1795335209664318581ull,
         .dropped = 3, .zero_timestamps = 4},
        {.pid = 4250, .ppid = 4242, .ended = false, .last_ns = 1795335209664319999ull},
    };
    snprintf(procs[0].host, sizeof procs[0].host, "gpu-\"1\"");
    snprintf(procs[0].command, sizeof procs[0].command, "python3 train.py\tx");
    snprintf(procs[1].host, sizeof procs[1].host, "gpu-1");
    cr_assert_eq(cp_trace_add_process(pt, &procs[0]), 0);
    cr_assert_eq(cp_trace_add_process(pt, &procs[1]), 1);
    pt->items[1].process = 1;
    pt->items[1].graph_id = 9;
    pt->items[1].graph_node = 123456789012ull;
    cr_assert_eq(cp_trace_file_write(&cases[0], "Test GPU", path), 0);
    cases[0].variants[0].trace.renamed_kernels = 0;
    cp_trace_file f;
    cr_assert_eq(cp_trace_file_read(path, &f), 0, "%s", cp_last_error());
    remove(path);
    cr_expect_str_eq(f.case_name, "demo");
    cr_expect_str_eq(f.device, "Test GPU");
    cr_assert_eq(f.nvariants, 1, "only traced variants are written");
    cr_expect_str_eq(f.variants[0].name, "streams");
    cr_expect_eq(f.variants[0].trace.renamed_kernels, 2, "the count of corrected kernel names is kept");
    const cp_trace *orig = &cases[0].variants[0].trace;
    cr_assert_eq(f.variants[0].trace.n, orig->n);
    for (size_t i = 0; i < orig->n; i++) {
        const cp_activity *a = &orig->items[i], *b = &f.variants[0].trace.items[i];
        cr_expect_eq(a->kind, b->kind);
        cr_expect_eq(a->start, b->start);
        cr_expect_eq(a->end, b->end);
        cr_expect_eq(a->stream, b->stream);
        cr_expect_eq(a->context, b->context);
        cr_expect_eq(a->copy_dir, b->copy_dir);
        cr_expect_eq(a->src, b->src);
        cr_expect_eq(a->dst, b->dst);
        cr_expect_eq(a->async, b->async);
        cr_expect_eq(a->depth, b->depth);
        cr_expect_eq(a->process, b->process);
        cr_expect_eq(a->graph_id, b->graph_id);
        cr_expect_eq(a->graph_node, b->graph_node);
        cr_expect_str_eq(a->name, b->name);
    }
    const cp_trace *rt = &f.variants[0].trace;
    cr_assert_eq(rt->nprocesses, 2);
    for (size_t i = 0; i < 2; i++) {
        const cp_process *a = &procs[i], *b = &rt->processes[i];
        cr_expect_eq(a->pid, b->pid);
        cr_expect_eq(a->ppid, b->ppid);
        cr_expect_str_eq(a->host, b->host);
        cr_expect_str_eq(a->command, b->command);
        cr_expect_eq(a->ended, b->ended);
        cr_expect_eq(a->last_ns, b->last_ns, "absolute times stay exact");
        cr_expect_eq(a->dropped, b->dropped);
        cr_expect_eq(a->zero_timestamps, b->zero_timestamps);
    }
    cp_metrics m;
    cr_assert_eq(cp_timeline_analyse(&f.variants[0].trace, NULL, &m), 0);
    cr_expect_eq(m.copy_kernel_overlap_ns, cases[0].variants[0].metrics.copy_kernel_overlap_ns);
    cp_metrics_free(&m);
    cp_trace_file_free(&f);
}

static void expect_parse_error(const char *text, const char *needle)
{
    cp_trace_file f;
    cr_expect_eq(cp_trace_file_parse(text, &f), CP_EPARSE, "accepted: %s", text);
    cr_expect_not_null(strstr(cp_last_error(), needle), "error '%s' lacks '%s'",
                       cp_last_error(), needle);
}

Test(report, trace_file_malformed_inputs)
{
    expect_parse_error("", "not valid JSON");
    expect_parse_error("{\"schema\":\"cuproof.trace/1\",", "not valid JSON");
    expect_parse_error("{\"schema\":\"cuproof.trace/9\",\"case\":\"x\",\"variants\":[]}",
                       "schema");
    expect_parse_error("{\"schema\":\"cuproof.trace/1\",\"variants\":[]}", "'case'");
    expect_parse_error("{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{}]}",
                       "variant 0");
    expect_parse_error("{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{\"name\":"
                       "\"v\",\"activities\":[{\"kind\":\"warp\"}]}]}",
                       "unknown 'kind'");
    expect_parse_error("{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{\"name\":"
                       "\"v\",\"activities\":[{\"kind\":\"kernel\",\"start\":-5,\"end\":1,"
                       "\"device\":0,\"context\":1,\"stream\":1,\"correlation\":1}]}]}",
                       "non-negative");
    expect_parse_error("{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{\"name\":"
                       "\"v\",\"activities\":[{\"kind\":\"memcpy\",\"start\":0,\"end\":1,"
                       "\"device\":0,\"context\":1,\"stream\":1,\"correlation\":1}]}]}",
                       "memcpy needs");
}

Test(report, trace_file_missing)
{
    cp_trace_file f;
    cr_expect_eq(cp_trace_file_read("/nonexistent/trace.json", &f), CP_EIO);
    cr_expect_not_null(strstr(cp_last_error(), "/nonexistent/trace.json"));
}

/* CUPTI times are about 1.8e18 ns, beyond a double's exact integers: the
 * trace file keeps them exact, and the run's own series come back. */
Test(report, trace_file_keeps_absolute_times_and_series)
{
    cp_case_result *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    snprintf(c->name, sizeof c->name, "exact");
    cp_variant_result *v = cp_result_add_variant(c);
    cr_assert_not_null(v);
    snprintf(v->name, sizeof v->name, "v");
    v->ran = v->traced = true;
    cp_trace_init(&v->trace);
    const uint64_t base = 1795335209664318581ull;
    add_kernel(&v->trace, base + 1, base + 1000003, 1, 7);
    add_kernel(&v->trace, base + 5, base + 2000001, 1, 8);
    v->trace.items[1].grid[0] = 39063;
    v->trace.items[1].grid[1] = 1;
    v->trace.items[1].grid[2] = 1;
    v->trace.items[1].block[0] = 256;
    v->trace.items[1].block[1] = 1;
    v->trace.items[1].block[2] = 1;
    const double events[2] = {1.000002, 1.999996};
    cr_assert_eq(
        cp_series_store(&v->series, &v->nseries, &v->series_cap, "event_ms", "ms", events, 2), 0);
    char path[] = "/tmp/cuproof-exact-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(cp_trace_file_write(c, "Test GPU", path), 0);
    cp_trace_file f;
    cr_assert_eq(cp_trace_file_read(path, &f), 0, "%s", cp_last_error());
    remove(path);
    cr_assert_eq(f.variants[0].trace.n, 2);
    cr_expect_eq(f.variants[0].trace.items[0].start, base + 1);
    cr_expect_eq(f.variants[0].trace.items[0].end, base + 1000003);
    cr_expect_eq(f.variants[0].trace.items[1].start, base + 5);
    cr_expect_eq(f.variants[0].trace.items[1].grid[0], 39063);
    cr_expect_eq(f.variants[0].trace.items[1].block[0], 256);
    cr_expect_eq(f.variants[0].trace.items[1].block[2], 1);
    cr_expect_eq(f.variants[0].trace.items[0].block[0], 0, "unknown shapes stay unknown");
    const cp_series *e = cp_series_find(f.variants[0].series, f.variants[0].nseries, "event_ms");
    cr_assert_not_null(e);
    cr_expect_str_eq(e->unit, "ms");
    cr_assert_eq(e->n, 2);
    cr_expect_float_eq(e->values[0], events[0], 1e-12);
    cr_expect_float_eq(e->values[1], events[1], 1e-12);
    cr_expect_null(cp_series_find(f.variants[0].series, f.variants[0].nseries, "other"));
    cp_trace_file_free(&f);
    cp_case_result_free(c);
    free(c);
}

Test(report, series_store_replaces_and_grows)
{
    cp_series *list = NULL;
    size_t n = 0, cap = 0;
    const double a[1] = {1}, b[2] = {2, 3};
    cr_assert_eq(cp_series_store(&list, &n, &cap, "x", "ms", a, 1), 0);
    cr_assert_eq(cp_series_store(&list, &n, &cap, "x", "ms", b, 2), 0);
    cr_expect_eq(n, 1, "a series of the same name is replaced");
    cr_expect_eq(list[0].n, 2);
    cr_expect_float_eq(list[0].values[1], 3.0, 1e-12);
    cr_expect_eq(cp_series_store(&list, &n, &cap, "", "ms", a, 1), CP_EINVAL);
    /* No fixed limit: forty series, each kept under its own name. */
    char name[8];
    for (int i = 1; i < 40; i++) {
        snprintf(name, sizeof name, "s%d", i);
        cr_assert_eq(cp_series_store(&list, &n, &cap, name, "", a, 1), 0);
    }
    cr_expect_eq(n, 40);
    cr_expect_not_null(cp_series_find(list, n, "s39"));
    cr_expect_eq(cp_series_find(list, n, "x")->n, 2, "growing kept the first series");
    cp_series_free(list, n);
}

Test(report, result_lists_grow_past_the_old_limits)
{
    cp_case_result r;
    memset(&r, 0, sizeof r);
    /* The old fixed tables held 64 checks and 16 variants. */
    for (int i = 0; i < 200; i++) {
        cp_check_result *c = cp_result_add_check(&r);
        cr_assert_not_null(c);
        snprintf(c->name, sizeof c->name, "check %d", i);
    }
    for (int i = 0; i < 40; i++)
        snprintf(cp_result_add_variant(&r)->name, 64, "v%d", i);
    cr_expect_eq(r.nchecks, 200);
    cr_expect_eq(r.nvariants, 40);
    cr_expect_str_eq(r.checks[0].name, "check 0");
    cr_expect_str_eq(r.checks[199].name, "check 199");
    cr_expect_str_eq(r.variants[39].name, "v39");
    cp_case_result_free(&r);
    cr_expect_eq(r.nchecks, 0);
    cr_expect_null(r.checks);
}

Test(report, trace_file_bad_series_and_origin)
{
    const char *head = "{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{\"name\":"
                       "\"v\",\"activities\":[]";
    char text[512];
    snprintf(text, sizeof text, "%s,\"origin_ns\":12}]}", head);
    expect_parse_error(text, "origin_ns");
    snprintf(text, sizeof text, "%s,\"origin_ns\":\"12x\"}]}", head);
    expect_parse_error(text, "origin_ns");
    snprintf(text, sizeof text, "%s,\"series\":{}}]}", head);
    expect_parse_error(text, "'series' must be an array");
    snprintf(text, sizeof text, "%s,\"series\":[{\"name\":\"e\"}]}]}", head);
    expect_parse_error(text, "a series needs");
    snprintf(text, sizeof text, "%s,\"series\":[{\"name\":\"e\",\"values\":[1,\"a\"]}]}]}",
             head);
    expect_parse_error(text, "non-number");
    expect_parse_error("{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{\"name\":"
                       "\"v\",\"activities\":[{\"kind\":\"kernel\",\"start\":0,\"end\":1,"
                       "\"device\":0,\"context\":1,\"stream\":1,\"correlation\":1,"
                       "\"grid\":[1,2]}]}]}",
                       "'grid' must be 3 numbers");
}

/* Processes, and the process and graph of each record, are optional: a
 * trace written before them (every recorded fixture) reads as one process
 * with no graphs; when present they must be well formed, and a record may
 * not name a process the variant lacks. */
Test(report, trace_file_processes_are_optional_and_checked)
{
    cp_trace_file f;
    cr_assert_eq(cp_trace_file_read(CUPROOF_FIXTURES "/multi-kernel-h100.trace.json", &f), 0, "%s",
                 cp_last_error());
    cr_expect_eq(f.variants[0].trace.nprocesses, 0);
    for (size_t i = 0; i < f.variants[0].trace.n; i++) {
        cr_assert_eq(f.variants[0].trace.items[i].process, 0);
        cr_assert_eq(f.variants[0].trace.items[i].graph_id, 0);
    }
    cp_trace_file_free(&f);

    const char *head = "{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{\"name\":"
                       "\"v\",";
    const char *kernel = "{\"kind\":\"kernel\",\"start\":0,\"end\":1,\"device\":0,\"context\":1,"
                         "\"stream\":1,\"correlation\":1";
    char text[1024];
    snprintf(text, sizeof text, "%s\"processes\":[{\"pid\":7}],\"activities\":[%s,\"process\":1}]}]}",
             head, kernel);
    expect_parse_error(text, "process 1 is not among the variant's 1 processes");
    snprintf(text, sizeof text, "%s\"processes\":{},\"activities\":[]}]}", head);
    expect_parse_error(text, "'processes' must be an array");
    const char *bad[] = {"{\"ppid\":1}", "{\"pid\":\"7\"}", "{\"pid\":7,\"last_ns\":12}",
                         "{\"pid\":7,\"last_ns\":\"-12\"}", "{\"pid\":7,\"ended\":1}",
                         "{\"pid\":7,\"host\":3}", "{\"pid\":4294967296}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "%s\"processes\":[%s],\"activities\":[]}]}", head, bad[i]);
        expect_parse_error(text, "process 0 needs a numeric pid");
    }
    /* Only the pid is needed; the rest defaults. */
    snprintf(text, sizeof text, "%s\"processes\":[{\"pid\":7},{\"pid\":8,\"ended\":true}],"
             "\"activities\":[%s,\"process\":1,\"graph_id\":2,\"graph_node\":3}]}]}",
             head, kernel);
    cr_assert_eq(cp_trace_file_parse(text, &f), 0, "%s", cp_last_error());
    const cp_trace *t = &f.variants[0].trace;
    cr_expect_eq(t->nprocesses, 2);
    cr_expect_not(t->processes[0].ended);
    cr_expect(t->processes[1].ended);
    cr_expect_str_eq(t->processes[0].host, "");
    cr_expect_eq(t->items[0].process, 1);
    cr_expect_eq(t->items[0].graph_id, 2);
    cr_expect_eq(t->items[0].graph_node, 3);
    cp_trace_file_free(&f);
}

/* The names a program gave its streams go into the trace file and come
 * back into the trace's table, each for its own process, device, context
 * and stream (a name with quotes and markup survives), so that a trace
 * read back (export, check, replay, timeline) labels its lanes as the run
 * did; a trace written before them (every recorded fixture) names no
 * stream and is written as it was; names must be well formed. */
Test(report, trace_file_keeps_stream_names)
{
    char path[] = "/tmp/cuproof-names-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cp_trace *pt = &cases[0].variants[0].trace;
    cp_process procs[2] = {{.pid = 4242, .ended = true}, {.pid = 4250, .ended = true}};
    cr_assert_eq(cp_trace_add_process(pt, &procs[0]), 0);
    cr_assert_eq(cp_trace_add_process(pt, &procs[1]), 1);
    pt->items[0].process = 1; /* the kernel on stream 1 of process 1 */
    cr_assert_eq(cp_trace_name_stream(pt, &(cp_stream_name){1, 0, 1, 1, "copy \"in\" <&>"}), 0);
    cr_assert_eq(cp_trace_name_stream(pt, &(cp_stream_name){0, 0, 1, 2, "second"}), 0);
    cr_assert_eq(cp_trace_file_write(&cases[0], "Test GPU", path), 0);
    char *text = cp_read_file(path);
    cr_assert_not_null(text);
    cr_expect_not_null(strstr(text, "\"stream_names\":[{\"process\":1,\"device\":0,\"context\":1,"
                                    "\"stream\":1,\"name\":\"copy \\\"in\\\" <&>\"}"),
                       "%s", text);
    free(text);
    cp_trace_file f;
    cr_assert_eq(cp_trace_file_read(path, &f), 0, "%s", cp_last_error());
    remove(path);
    const cp_trace *t = &f.variants[0].trace;
    cr_expect_eq(t->nstream_names, 2);
    cr_expect_str_eq(cp_trace_stream_name(t, 1, 0, 1, 1), "copy \"in\" <&>");
    cr_expect_str_eq(cp_trace_stream_name(t, 0, 0, 1, 2), "second");
    cr_expect_null(cp_trace_stream_name(t, 0, 0, 1, 1), "process 0's stream 1 is not named");
    char label[CP_STREAM_LABEL_MAX];
    const cp_activity *k = &t->items[0];
    cr_expect_str_eq(cp_stream_label(t, k->process, k->device, k->context, k->stream, label,
                                     sizeof label),
                     "copy \"in\" <&> (stream 1)");
    cp_trace_file_free(&f);

    /* Written before them: none, and a trace without names writes none. */
    cr_assert_eq(cp_trace_file_read(CUPROOF_FIXTURES "/multi-kernel-h100.trace.json", &f), 0, "%s",
                 cp_last_error());
    for (size_t i = 0; i < f.nvariants; i++)
        cr_expect_eq(f.variants[i].trace.nstream_names, 0);
    cp_trace_file_free(&f);
    pt->nstream_names = 0;
    fd = mkstemp(strcpy(path, "/tmp/cuproof-names-XXXXXX"));
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(cp_trace_file_write(&cases[0], "Test GPU", path), 0);
    text = cp_read_file(path);
    remove(path);
    cr_assert_not_null(text);
    cr_expect_null(strstr(text, "stream_names"), "%s", text);
    free(text);

    /* Malformed names. */
    const char *head = "{\"schema\":\"cuproof.trace/1\",\"case\":\"x\",\"variants\":[{\"name\":"
                       "\"v\",\"processes\":[{\"pid\":7}],";
    char bad[1024];
    snprintf(bad, sizeof bad, "%s\"stream_names\":{},\"activities\":[]}]}", head);
    expect_parse_error(bad, "'stream_names' must be an array");
    const char *entries[] = {"{\"device\":0,\"context\":1,\"name\":\"a\"}",
                             "{\"device\":0,\"context\":1,\"stream\":2}",
                             "{\"device\":0,\"context\":1,\"stream\":2,\"name\":3}",
                             "{\"device\":0,\"context\":1,\"stream\":-2,\"name\":\"a\"}",
                             "{\"device\":0,\"context\":4294967296,\"stream\":2,\"name\":\"a\"}",
                             "{\"process\":\"0\",\"device\":0,\"context\":1,\"stream\":2,"
                             "\"name\":\"a\"}"};
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        snprintf(bad, sizeof bad, "%s\"stream_names\":[%s],\"activities\":[]}]}", head,
                 entries[i]);
        expect_parse_error(bad, "stream name 0 needs device, context and stream numbers");
    }
    snprintf(bad, sizeof bad,
             "%s\"stream_names\":[{\"process\":1,\"device\":0,\"context\":1,\"stream\":2,"
             "\"name\":\"a\"}],\"activities\":[]}]}",
             head);
    expect_parse_error(bad, "stream name 0: process 1 is not among the variant's 1 processes");
}

/* Past 50000 records a timeline embeds their summary, a column per
 * thousandth of the span, not the records: the page stays small however
 * long the trace, and says where the records are. Below it, the records. */
Test(report, a_long_timeline_is_embedded_as_its_summary)
{
    cp_report r = {.ncases = 1};
    snprintf(r.profile, sizeof r.profile, "ci");
    cp_case_result *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    r.cases = c;
    snprintf(c->name, sizeof c->name, "long");
    c->status = CP_STATUS_PASSED;
    cp_variant_result *v = cp_result_add_variant(c);
    cr_assert_not_null(v);
    snprintf(v->name, sizeof v->name, "many");
    v->ran = v->traced = true;
    cp_trace_init(&v->trace);
    for (uint64_t i = 0; i < 60000; i++)
        add_kernel(&v->trace, 1000 * i, 1000 * i + 700, 1, 1 + (uint32_t)(i % 4));
    cr_assert_eq(cp_timeline_analyse(&v->trace, NULL, &v->metrics), 0);
    char *html = cp_report_html(&r);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, "\"summary\":{\"bins\":1000,"), "the summary is embedded");
    cr_expect_not_null(strstr(html, "\"items\":[],"), "the records are not");
    cr_expect_not_null(strstr(html, "60000 records: too many to embed"), "and the page says so");
    /* 4 lanes x 1000 columns at most, a few dozen bytes each. */
    cr_expect_lt(strlen(html), 400000, "%zu bytes", strlen(html));
    /* Every record's column counts it: 60 records in each of the 1000. */
    cr_expect_not_null(strstr(html, "[0,0,0,"), "lane 0's first column, kernels");
    free(html);

    cp_trace_clear(&v->trace);
    cp_metrics_free(&v->metrics);
    for (uint64_t i = 0; i < 10; i++)
        add_kernel(&v->trace, 1000 * i, 1000 * i + 700, 1, 1);
    cr_assert_eq(cp_timeline_analyse(&v->trace, NULL, &v->metrics), 0);
    html = cp_report_html(&r);
    cr_assert_not_null(html);
    cr_expect_null(strstr(html, "\"summary\":{"), "a short trace embeds its records");
    cr_expect_not_null(strstr(html, "\"items\":[[0,0.000,0.700,0,"));
    free(html);
    cp_case_result_free(c);
    free(c);
}

/* 1.6: the kernel breakdown. Twelve compute kernels (k00 for 1200 ns ...
 * k11 for 100 ns, k00 launched twice, 500 and 700 ns) and one NCCL
 * kernel, mangled: the ten compute kernels with the most device time and
 * the NCCL one as rows, demangled, the last two compute kernels summed;
 * the class rules at the root. The page shows the same, folded. */
Test(report, kernel_breakdown_in_json_and_html)
{
    cp_variant_result *v = cp_result_add_variant(&cases[0]);
    cr_assert_not_null(v);
    strcpy(v->name, "kernels");
    v->ran = v->traced = true;
    cp_trace_init(&v->trace);
    static const char *names[12] = {"k00", "k01", "k02", "k03", "k04", "k05",
                                     "k06", "k07", "k08", "k09", "k10", "k11"};
    uint64_t t = 0;
    for (int i = 0; i < 12; i++) {
        uint64_t d = (uint64_t)(12 - i) * 100;
        if (i == 0) {
            cp_activity a = {.kind = CP_ACT_KERNEL, .start = t, .end = t + 500, .name = names[0]};
            cr_assert_geq(cp_trace_add(&v->trace, &a), 0);
            t += 500;
            d = 700;
        }
        cp_activity a = {.kind = CP_ACT_KERNEL, .start = t, .end = t + d, .name = names[i]};
        cr_assert_geq(cp_trace_add(&v->trace, &a), 0);
        t += d;
    }
    cp_activity nccl = {.kind = CP_ACT_KERNEL, .start = 0, .end = 300, .stream = 9,
                        .name = "_Z43ncclDevKernel_AllReduce_Sum_f32_RING_LLP128v"};
    cr_assert_geq(cp_trace_add(&v->trace, &nccl), 0);
    cr_assert_eq(cp_timeline_analyse(&v->trace, NULL, &v->metrics), 0);

    cJSON *root = cp_report_to_json(&rep);
    cr_assert_not_null(root);
    const cJSON *classes = get(root, "work_classes");
    cr_expect_eq(cJSON_GetArraySize(classes), CP_CLASS_COUNT);
    cr_expect_str_eq(get(cJSON_GetArrayItem(classes, CP_CLASS_COMMUNICATION), "class")->valuestring,
                     "communication");
    const cJSON *vs = get(cJSON_GetArrayItem(get(root, "cases"), 0), "variants");
    const cJSON *bd = get(get(cJSON_GetArrayItem(vs, 2), "trace"), "kernel_breakdown");
    cr_expect_eq(get(bd, "top")->valueint, 10);
    const cJSON *rows = get(bd, "kernels");
    cr_assert_eq(cJSON_GetArraySize(rows), 11);
    const cJSON *r0 = cJSON_GetArrayItem(rows, 0);
    cr_expect_str_eq(get(r0, "name")->valuestring, "k00");
    cr_expect_str_eq(get(r0, "class")->valuestring, "compute");
    cr_expect_eq(get(r0, "count")->valueint, 2);
    cr_expect_eq(get(r0, "total_ns")->valueint, 1200);
    cr_expect_float_eq(get(r0, "mean_ns")->valuedouble, 600.0, 1e-9);
    cr_expect_eq(get(r0, "min_ns")->valueint, 500);
    cr_expect_eq(get(r0, "max_ns")->valueint, 700);
    cr_expect_str_eq(get(cJSON_GetArrayItem(rows, 9), "name")->valuestring, "k09");
    const cJSON *r10 = cJSON_GetArrayItem(rows, 10);
    cr_expect_str_eq(get(r10, "class")->valuestring, "communication");
    cr_expect_str_eq(get(r10, "demangled")->valuestring,
                     "ncclDevKernel_AllReduce_Sum_f32_RING_LLP128()");
    const cJSON *rest = get(bd, "rest");
    cr_assert_eq(cJSON_GetArraySize(rest), 1);
    const cJSON *r = cJSON_GetArrayItem(rest, 0);
    cr_expect_str_eq(get(r, "class")->valuestring, "compute");
    cr_expect_eq(get(r, "kernels")->valueint, 2);
    cr_expect_eq(get(r, "count")->valueint, 2);
    cr_expect_eq(get(r, "total_ns")->valueint, 300, "k10 200 ns and k11 100 ns");
    cJSON_Delete(root);

    char *html = cp_report_html(&rep);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, "<details class=\"kernels\"><summary><h3>Kernels by device "
                                    "time</h3> top 10 per class, 2 traced variants</summary>"),
                       "folded, its line saying what it holds");
    cr_expect_not_null(strstr(html, "<h4>kernels <small>13 distinct kernels, 1 of them "
                                    "communication</small></h4>"));
    cr_expect_not_null(strstr(html, "<code>ncclDevKernel_AllReduce_Sum_f32_RING_LLP128()</code>"));
    cr_expect_not_null(strstr(html, "2 other kernels"));
    free(html);
}

/* A directory given where a file is read says why it cannot be read
 * ("Is a directory"), not only that it cannot; a file's bytes are counted
 * (a NUL among them shows). */
Test(report, reading_a_directory_says_why)
{
    size_t len = 99;
    cr_expect_null(cp_read_file_len("/tmp", &len));
    cr_expect_not_null(strstr(cp_last_error(), "cannot read /tmp: Is a directory"), "%s",
                       cp_last_error());
    cr_expect_eq(len, 0u);
    char path[] = "/tmp/cuproof-nul-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "ab\0cd", 5), 5);
    close(fd);
    char *text = cp_read_file_len(path, &len);
    cr_assert_not_null(text, "%s", cp_last_error());
    cr_expect_eq(len, 5u);
    cr_expect_eq(strlen(text), 2u);
    free(text);
    unlink(path);
}
