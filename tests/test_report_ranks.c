/* A distributed program's ranks in the reports (cuproof/internal/ranks.h): the
 * "ranks" object of report.json written and read back, the HTML's ranks
 * table and timelines stacked by rank, the processes' names in Perfetto
 * and the terminal's table. The ranks are built by hand (two ranks, one
 * of them the straggler, on one host or two), so every figure asserted is
 * one planted here. */
#include <cuproof/internal/perfetto.h>
#include <cuproof/internal/report.h>
#include <cuproof/error.h>
#include "helpers.h"
#include "reports/json.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Two ranks on `nhosts` hosts (1 or 2): rank 1 is the straggler, on
 * node-b when there are two hosts. */
static cp_ranks *two_ranks(size_t nhosts)
{
    cp_ranks *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    r->rows = calloc(2, sizeof *r->rows);
    r->hosts = calloc(nhosts, sizeof *r->hosts);
    cr_assert(r->rows && r->hosts);
    r->nrows = 2;
    r->nhosts = nhosts;
    r->rows[0] = (cp_rank_row){.rank = 0, .host = 0, .pid = 4242, .processes = 1,
                               .devices = {0}, .ndevices = 1, .span_ns = 10000000,
                               .busy_ns = 8000000, .idle_ns = 2000000, .idle_share = 0.2,
                               .kernels = 120, .comm_busy_ns = 3000000,
                               .comm_compute_overlap_ns = 1500000, .exposed_comm_ns = 1500000,
                               .comm_compute_overlap_ratio = 0.5, .exposed_comm_share = 0.15,
                               .collectives = 40, .arrived_last = 6, .median_lag_ns = 120000,
                               .mean_lag_ns = 200000, .max_lag_ns = 900000};
    r->rows[1] = (cp_rank_row){.rank = 1, .host = nhosts > 1 ? 1 : 0, .pid = 4343,
                               .processes = 1, .devices = {nhosts > 1 ? 1000 : 1},
                               .ndevices = 1, .span_ns = 12000000, .busy_ns = 6000000,
                               .idle_ns = 6000000, .idle_share = 0.5, .kernels = 118,
                               .comm_busy_ns = 4000000, .comm_compute_overlap_ns = 1000000,
                               .exposed_comm_ns = 3000000, .comm_compute_overlap_ratio = 0.25,
                               .exposed_comm_share = 0.25, .collectives = 40,
                               .arrived_last = 34, .median_lag_ns = 690000,
                               .mean_lag_ns = 4100000, .max_lag_ns = 20500000};
    r->hosts[0] = (cp_host_clock){.name = "node-a", .aligned = true, .shared = 40};
    if (nhosts > 1)
        r->hosts[1] = (cp_host_clock){.name = "node-b", .aligned = true,
                                      .offset_ns = -2500000, .residual_ns = 20000,
                                      .shared = 40};
    r->all_aligned = true;
    r->collectives = 40;
    r->median_start_spread_ns = 690000;
    r->median_end_spread_ns = 20000;
    r->straggler = true;
    r->straggler_rank = 1;
    r->straggler_median_lag_ns = 690000;
    r->straggler_mean_lag_ns = 4100000;
    r->straggler_max_lag_ns = 20500000;
    return r;
}

/* A report of one traced program (`cuproof exec`'s case) whose variant
 * carries `ranks` (NULL: none). */
static void program_report(cp_report *rep, cp_case_result *c, cp_ranks *ranks)
{
    memset(rep, 0, sizeof *rep);
    memset(c, 0, sizeof *c);
    strcpy(rep->tool_version, "0.1.0");
    strcpy(rep->profile, "exec");
    rep->traced = true;
    strcpy(c->name, "ddp");
    strcpy(c->title, "torchrun train.py");
    strcpy(c->source, "cuproof exec");
    c->status = CP_STATUS_PASSED;
    cp_variant_result *v = cp_result_add_variant(c);
    cr_assert_not_null(v);
    strcpy(v->name, "program");
    v->ran = v->traced = true;
    v->ranks = ranks;
    rep->cases = c;
    rep->ncases = 1;
}

static void tmp_dir(char *dir)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ---- report.json ---- */

static void rows_equal(const cp_rank_row *a, const cp_rank_row *b)
{
#define SAME(f) cr_expect_eq(a->f, b->f, "rank %d: " #f, (int)a->rank)
    SAME(rank); SAME(host); SAME(pid); SAME(processes); SAME(ndevices);
    SAME(span_ns); SAME(busy_ns); SAME(idle_ns); SAME(idle_share); SAME(kernels);
    SAME(comm_busy_ns); SAME(comm_compute_overlap_ns); SAME(exposed_comm_ns);
    SAME(comm_compute_overlap_ratio); SAME(exposed_comm_share); SAME(collectives);
    SAME(arrived_last); SAME(median_lag_ns); SAME(mean_lag_ns); SAME(max_lag_ns);
    for (uint32_t k = 0; k < a->ndevices && k < CP_RANK_MAX_DEVICES; k++)
        SAME(devices[k]);
#undef SAME
}

Test(ranks_report, json_round_trip)
{
    cp_report rep;
    cp_case_result c;
    cp_ranks *with_waits = two_ranks(2);
    /* The matched collectives' waiting and transfer, by operation. */
    with_waits->waits = calloc(1, sizeof *with_waits->waits);
    cr_assert_not_null(with_waits->waits);
    with_waits->nwaits = 1;
    with_waits->waits[0] = (cp_collective_wait){.op = "AllGather", .algo = "RING",
                                                .proto = "LL128", .matched = 12,
                                                .wait_ns = 1500000, .transfer_ns = 3250000};
    program_report(&rep, &c, with_waits);
    char dir[] = "/tmp/cuproof-ranks-json-XXXXXX", path[300];
    tmp_dir(dir);
    snprintf(path, sizeof path, "%s/report.json", dir);
    cr_assert_eq(cp_report_json_write(&rep, path), 0, "%s", cp_last_error());

    /* The file's own words, as a reader of the contract sees them. */
    cJSON *root = NULL;
    cr_assert_eq(cp_report_json_load(path, &root), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(root, "schema_version")->valuestring, "1.18");
    const cJSON *v = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "cases"), 0),
                            "variants"),
        0);
    const cJSON *ranks = cJSON_GetObjectItem(v, "ranks");
    cr_assert(cJSON_IsObject(ranks));
    const cJSON *r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(ranks, "rows"), 1);
    cr_expect_str_eq(cJSON_GetObjectItem(r1, "host")->valuestring, "node-b");
    cr_expect_eq(cJSON_GetObjectItem(r1, "host_index")->valueint, 1);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r1, "devices")), 1);
    cr_expect_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(r1, "devices"), 0)->valueint, 1000);
    cr_expect_eq(cJSON_GetObjectItem(r1, "mean_lag_ns")->valuedouble, 4100000);
    const cJSON *h1 = cJSON_GetArrayItem(cJSON_GetObjectItem(ranks, "hosts"), 1);
    cr_expect_eq(cJSON_GetObjectItem(h1, "offset_ns")->valuedouble, -2500000);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(h1, "aligned")));
    const cJSON *s = cJSON_GetObjectItem(ranks, "straggler");
    cr_expect_eq(cJSON_GetObjectItem(s, "rank")->valueint, 1);
    cr_expect_eq(cJSON_GetObjectItem(s, "max_lag_ns")->valuedouble, 20500000);
    cr_expect_eq(cJSON_GetObjectItem(ranks, "median_end_spread_ns")->valuedouble, 20000);
    cJSON_Delete(root);

    /* Read back: every field as written. */
    cp_report back;
    cr_assert_eq(cp_report_read(path, &back), 0, "%s", cp_last_error());
    const cp_ranks *a = rep.cases[0].variants[0].ranks, *b = back.cases[0].variants[0].ranks;
    cr_assert_not_null(b, "the ranks survive a replay of the report");
    cr_assert_eq(b->nrows, 2);
    cr_assert_eq(b->nhosts, 2);
    for (size_t i = 0; i < 2; i++) {
        rows_equal(&a->rows[i], &b->rows[i]);
        cr_expect_str_eq(b->hosts[i].name, a->hosts[i].name);
        cr_expect_eq(b->hosts[i].aligned, a->hosts[i].aligned);
        cr_expect_eq(b->hosts[i].offset_ns, a->hosts[i].offset_ns);
        cr_expect_eq(b->hosts[i].residual_ns, a->hosts[i].residual_ns);
        cr_expect_eq(b->hosts[i].shared, a->hosts[i].shared);
    }
    cr_expect_eq(b->all_aligned, true);
    cr_expect_eq(b->collectives, 40);
    cr_expect_eq(b->median_start_spread_ns, 690000);
    cr_expect_eq(b->median_end_spread_ns, 20000);
    cr_expect_eq(b->straggler, true);
    cr_expect_eq(b->straggler_rank, 1);
    cr_expect_eq(b->straggler_median_lag_ns, 690000);
    cr_expect_eq(b->straggler_mean_lag_ns, 4100000);
    cr_expect_eq(b->straggler_max_lag_ns, 20500000);
    cr_assert_eq(b->nwaits, 1);
    cr_expect_str_eq(b->waits[0].op, "AllGather");
    cr_expect_str_eq(b->waits[0].algo, "RING");
    cr_expect_str_eq(b->waits[0].proto, "LL128");
    cr_expect_eq(b->waits[0].matched, 12);
    cr_expect_eq(b->waits[0].wait_ns, 1500000);
    cr_expect_eq(b->waits[0].transfer_ns, 3250000);
    cp_report_free(&back);
    cp_case_result_free(&c);
    rm_dir(dir);
}

/* No straggler is null, and no ranks is no "ranks": read back as NULL. */
Test(ranks_report, json_without_straggler_or_ranks)
{
    cp_report rep;
    cp_case_result c;
    cp_ranks *r = two_ranks(1);
    r->straggler = false;
    r->straggler_rank = -1;
    program_report(&rep, &c, r);
    cJSON *root = cp_report_to_json(&rep);
    cr_assert_not_null(root);
    const cJSON *v = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "cases"), 0),
                            "variants"),
        0);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "ranks"), "straggler")));
    cJSON_Delete(root);
    cp_case_result_free(&c);

    program_report(&rep, &c, NULL);
    root = cp_report_to_json(&rep);
    cr_assert_not_null(root);
    v = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "cases"), 0),
                            "variants"),
        0);
    cr_expect_null(cJSON_GetObjectItem(v, "ranks"));
    cJSON_Delete(root);
    cp_case_result_free(&c);
}

/* Writes the report with its ranks, then `edit` spoils one field; the
 * reader's error must name the file and the field. */
static void spoilt(void (*edit)(cJSON *ranks), const char *field)
{
    cp_report rep;
    cp_case_result c;
    program_report(&rep, &c, two_ranks(2));
    cJSON *root = cp_report_to_json(&rep);
    cr_assert_not_null(root);
    cp_case_result_free(&c);
    cJSON *v = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "cases"), 0),
                            "variants"),
        0);
    edit(cJSON_GetObjectItem(v, "ranks"));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    cr_assert_not_null(text);
    char dir[] = "/tmp/cuproof-ranks-bad-XXXXXX", path[300];
    tmp_dir(dir);
    snprintf(path, sizeof path, "%s/report.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    cp_report back;
    cr_expect_eq(cp_report_read(path, &back), CP_EPARSE);
    cr_expect_not_null(strstr(cp_last_error(), path), "%s", cp_last_error());
    cr_expect_not_null(strstr(cp_last_error(), "variant program"), "%s", cp_last_error());
    cr_expect_not_null(strstr(cp_last_error(), field), "%s", cp_last_error());
    rm_dir(dir);
}

static void bad_host_index(cJSON *ranks)
{
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(ranks, "rows"), 1);
    cJSON_ReplaceItemInObject(row, "host_index", cJSON_CreateNumber(7));
}

static void bad_pid(cJSON *ranks)
{
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(ranks, "rows"), 0);
    cJSON_ReplaceItemInObject(row, "pid", cJSON_CreateString("4242"));
}

static void no_rank(cJSON *ranks)
{
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(ranks, "rows"), 0),
                               "rank");
}

static void bad_straggler(cJSON *ranks)
{
    cJSON_ReplaceItemInObject(ranks, "straggler", cJSON_CreateString("rank 1"));
}

static void bad_offset(cJSON *ranks)
{
    cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItem(ranks, "hosts"), 1);
    cJSON_ReplaceItemInObject(h, "offset_ns", cJSON_CreateTrue());
}

Test(ranks_report, json_bad_ranks_name_the_file_and_field)
{
    spoilt(bad_host_index, "ranks.rows[1].host_index 7 names no host (2 in ranks.hosts)");
    spoilt(bad_pid, "ranks.rows[0].pid is not a number");
    spoilt(no_rank, "ranks.rows[0]: no 'rank'");
    spoilt(bad_straggler, "ranks.straggler is neither null nor an object");
    spoilt(bad_offset, "ranks.hosts[1].offset_ns is not a number");
}

/* ---- Perfetto ---- */

/* A torchrun job: the launcher (no rank) and ranks 1 and 0 on node-a and
 * node-b, listed in the files' order (rank 1 first), a kernel each. */
static void job_trace(cp_trace *t)
{
    cp_trace_init(t);
    cp_process p = {.pid = 4100, .host = "node-a", .command = "torchrun train.py", .rank = -1};
    cr_assert_eq(cp_trace_add_process(t, &p), 0);
    p = (cp_process){.pid = 4343, .host = "node-b", .command = "python3 train.py", .rank = 1,
                     .rank_var = "RANK"};
    cr_assert_eq(cp_trace_add_process(t, &p), 1);
    p = (cp_process){.pid = 4242, .host = "node-a", .command = "python3 train.py", .rank = 0,
                     .rank_var = "RANK"};
    cr_assert_eq(cp_trace_add_process(t, &p), 2);
    cp_activity k = {.kind = CP_ACT_KERNEL, .start = 1000, .end = 5000, .context = 1,
                     .stream = 7, .name = "step"};
    for (uint32_t i = 0; i < 3; i++) {
        k.process = i;
        k.device = i == 1 ? 1000 : 0;
        k.start += 100;
        cr_assert_eq(cp_trace_add(t, &k), 0);
    }
}

/* The sort index Perfetto gets for the process named `name`, or -1. */
static int sort_index_of(const char *json, const char *name)
{
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root);
    int pid = -1, index = -1;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        const cJSON *n = cJSON_GetObjectItem(args, "name");
        if (strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_name") == 0 &&
            cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            pid = cJSON_GetObjectItem(e, "pid")->valueint;
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        if (pid >= 0 && cJSON_GetObjectItem(e, "pid")->valueint == pid &&
            strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_sort_index") == 0)
            index = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "sort_index")->valueint;
    }
    cJSON_Delete(root);
    return index;
}

Test(ranks_report, perfetto_names_a_process_by_rank_host_and_pid)
{
    cp_trace t;
    job_trace(&t);
    char label[300];
    cr_expect_str_eq(cp_process_label(&t.processes[1], label, sizeof label),
                     "rank 1 (node-b, 4343): python3 train.py");
    cr_expect_str_eq(cp_process_label(&t.processes[0], label, sizeof label),
                     "torchrun train.py", "the launcher keeps its command");

    /* The JSON trace: each device's process by rank, stacked by rank. */
    char *json = cp_chrome_trace(&t, "ddp");
    cr_assert_not_null(json);
    cr_expect_eq(sort_index_of(json, "rank 0 (node-a, 4242): GPU 0, context 1"), 0, "%s", json);
    cr_expect_eq(sort_index_of(json, "rank 1 (node-b, 4343): GPU 1000, context 1"), 1, "%s",
                 json);
    cr_expect_gt(sort_index_of(json, "GPU 0, context 1, pid 4100"), 1, "the launcher after");
    cr_expect_not_null(strstr(json, "\"CUDA API, rank 1 (node-b, 4343)\""), "%s", json);
    free(json);

    /* The protobuf trace: the process track's name. */
    char dir[] = "/tmp/cuproof-ranks-pb-XXXXXX", cmd[600];
    tmp_dir(dir);
    cr_assert_eq(cp_perfetto_pb_write(dir, "ddp", "program", &t), 0, "%s", cp_last_error());
    snprintf(cmd, sizeof cmd,
             "grep -c 'rank 0 (node-a, 4242): python3 train.py' '%s/ddp.program.perfetto-trace' "
             ">/dev/null && grep -c 'torchrun train.py' '%s/ddp.program.perfetto-trace' "
             ">/dev/null",
             dir, dir);
    cr_expect_eq(system(cmd), 0, "the pb trace names rank 0 and the launcher");
    rm_dir(dir);
    cp_trace_free(&t);
}

/* ---- The terminal ---- */

Test(ranks_report, terminal_table_leads_with_the_ranks)
{
    cp_ranks *r = two_ranks(2);
    char *text = cp_ranks_text(r, "  ");
    cr_assert_not_null(text);
    cr_expect_str_eq(text,
        "  ranks: 2 on 2 hosts, 40 collectives matched\n"
        "  rank  host    devices    busy ms    idle  comm/compute  exposed comm  arrived last\n"
        "     0  node-a  0            8.000   20.0%         50.0%         15.0%          6/40\n"
        "     1  node-b  1000         6.000   50.0%         25.0%         25.0%         34/40"
        "  straggler\n"
        "  straggler: rank 1 (node-b) arrived last at 34 of 40 collectives; lag mean 4.10 ms, "
        "median 690 µs, most 20.5 ms\n"
                     "  host node-b: clock put on node-a's by -2.50 ms (residual 20.0 µs over 40 "
                     "collectives)\n");
    free(text);

    /* No straggler, host node-b not aligned, rank 0 on nine devices. */
    r->straggler = false;
    r->hosts[1].aligned = false;
    r->all_aligned = false;
    r->rows[0].ndevices = 9;
    for (uint32_t k = 0; k < CP_RANK_MAX_DEVICES; k++)
        r->rows[0].devices[k] = k;
    text = cp_ranks_text(r, "");
    cr_assert_not_null(text);
    cr_expect_null(strstr(text, "straggler"), "%s", text);
    cr_expect_not_null(strstr(text, "   0  node-a  0,1,2,3,4,5,6,7,+1      8.000"), "%s", text);
    cr_expect_not_null(strstr(text, "host node-b: clock not aligned (it shares no collective "
                                    "with node-a)"),
                       "%s", text);
    free(text);
    cp_ranks_free(r);
}

/* ---- report.html ---- */

/* The report of the job above, analysed, with `ranks` (NULL: none). */
static void job_report(cp_report *rep, cp_case_result *c, cp_ranks *ranks)
{
    program_report(rep, c, ranks);
    cp_variant_result *v = &c->variants[0];
    job_trace(&v->trace);
    cr_assert_eq(cp_timeline_analyse(&v->trace, NULL, &v->metrics), 0);
}

Test(ranks_report, html_ranks_table_after_the_key_findings)
{
    cp_report rep;
    cp_case_result c;
    job_report(&rep, &c, two_ranks(2));
    char *html = cp_report_html(&rep);
    cr_assert_not_null(html);
    const char *key = strstr(html, "<section id=\"key-findings\">");
    const char *ranks = strstr(html, "<section class=\"ranks\" id=\"ranks-ddp-program\">");
    const char *index = strstr(html, "<h2>Cases</h2>");
    cr_assert(key && ranks && index && key < ranks && ranks < index,
              "the ranks come right after the key findings");
    cr_expect_not_null(strstr(ranks, "<h2>Ranks <small>ddp / program: 2 ranks on 2 hosts, 40 "
                                     "collectives</small></h2>"));
    cr_expect_not_null(strstr(ranks, "<tr data-rank=\"0\"><td>node-a</td><td>0</td><td>4242</td>"
                                     "<td>0</td><td>8.00 ms</td><td>2.00 ms (20%)</td>"
                                     "<td>50%</td><td>1.50 ms (15%)</td><td>40</td><td>6</td>"
                                     "<td>200 µs</td></tr>"),
                       "%s", ranks);
    cr_expect_not_null(strstr(ranks, "<tr data-rank=\"1\" class=\"straggler\"><td>node-b</td>"
                                     "<td>1 <b class=\"failed\">straggler</b></td><td>4343</td>"
                                     "<td>1000</td><td>6.00 ms</td><td>6.00 ms (50%)</td>"
                                     "<td>25%</td><td>3.00 ms (25%)</td><td>40</td><td>34</td>"
                                     "<td>4.10 ms</td></tr>"),
                       "%s", ranks);
    cr_expect_not_null(strstr(ranks, "Straggler: rank 1 arrived last at 34 of 40 collectives, "
                                     "lag mean 4.10 ms, median 690 µs, most 20.5 ms."));
    cr_expect_not_null(strstr(ranks, "<tr><td>node-b</td><td>-2.50 ms</td><td>20.0 µs</td>"
                                     "<td>40</td></tr>"),
                       "the hosts' clocks: %s", ranks);
    cr_expect_eq(strstr(html, "class=\"straggler\"><td>"), strstr(ranks, "<tr data-rank=\"1\" "
                 "class=\"straggler\">") + strlen("<tr data-rank=\"1\" "), "one row marked");

    /* Timelines stacked by rank: rank 0, rank 1, then the launcher,
     * whatever the analysis' order (device, then process). */
    cr_expect_not_null(strstr(html, "\"lanes\":[\"rank 0 GPU 0 ctx 1 stream 7\","
                                    "\"rank 1 GPU 1000 ctx 1 stream 7\","
                                    "\"GPU 0 pid 4100 ctx 1 stream 7\",\"NVTX phases\"]"),
                       "%s", strstr(html, "\"lanes\""));
    cr_expect_not_null(strstr(html, "\"items\":[[2,0.000,"), "the launcher's kernel, last row");
    cr_expect_not_null(strstr(html, "],[1,0.100,"), "rank 1's kernel");
    cr_expect_not_null(strstr(html, "],[0,0.200,"), "rank 0's kernel, first row");
    free(html);
    cp_case_result_free(&c);
}

/* One host: no clocks to show. A host not aligned says so. No ranks: no
 * table, and the lanes as before. */
Test(ranks_report, html_hosts_only_with_several_and_no_ranks_no_table)
{
    cp_report rep;
    cp_case_result c;
    job_report(&rep, &c, two_ranks(1));
    char *html = cp_report_html(&rep);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, "<section class=\"ranks\""));
    cr_expect_null(strstr(html, "<table class=\"hosts\">"), "one host, one clock");
    free(html);
    cp_case_result_free(&c);

    cp_ranks *r = two_ranks(2);
    r->hosts[1].aligned = false;
    r->straggler = false;
    job_report(&rep, &c, r);
    html = cp_report_html(&rep);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, "<tr><td>node-b</td><td colspan=\"2\" class=\"failed\">not "
                                    "aligned: no collective shared with the first host</td>"
                                    "<td>40</td></tr>"));
    cr_expect_null(strstr(html, "class=\"straggler\""), "no straggler, none marked");
    cr_expect_null(strstr(html, "Straggler:"));
    free(html);
    cp_case_result_free(&c);

    job_report(&rep, &c, NULL);
    html = cp_report_html(&rep);
    cr_assert_not_null(html);
    cr_expect_null(strstr(html, "class=\"ranks\""), "no ranks, no table");
    cr_expect_null(strstr(html, "Ranks"));
    cr_expect_not_null(strstr(html, "\"lanes\":[\"rank 0 GPU 0 ctx 1 stream 7\","),
                       "the lanes still stack by the processes' ranks");
    free(html);
    cp_case_result_free(&c);
}

/* Issue 42, item 3, on the page: the collectives by operation in the
 * variant's kernel section and the matched collectives' waiting and
 * transfer in the ranks' section, as the terminal shows them. */
Test(ranks_report, html_collectives_by_operation)
{
    cp_report rep;
    cp_case_result c;
    cp_ranks *ranks = two_ranks(2);
    ranks->waits = calloc(1, sizeof *ranks->waits);
    cr_assert_not_null(ranks->waits);
    ranks->nwaits = 1;
    ranks->waits[0] = (cp_collective_wait){.op = "AllReduce", .algo = "RING", .proto = "LL",
                                           .matched = 74, .wait_ns = 35500000,
                                           .transfer_ns = 44500000};
    job_report(&rep, &c, ranks);
    cp_metrics *m = &c.variants[0].metrics;
    m->collective_rows = calloc(1, sizeof *m->collective_rows);
    cr_assert_not_null(m->collective_rows);
    m->ncollective_rows = 1;
    m->collective_rows[0] = (cp_collective_row){.op = "AllReduce", .algo = "RING", .proto = "LL",
                                                .count = 148, .total_ns = 79900000,
                                                .median_ns = 354000, .exposed_ns = 35400000};
    char *html = cp_report_html(&rep);
    cr_assert_not_null(html);
    cr_expect_not_null(strstr(html, "<tr><td>AllReduce RING LL</td><td>74</td><td>35.5 ms</td>"
                                    "<td>44.5 ms</td></tr>"),
                       "%s", html);
    cr_expect_not_null(strstr(html, "<tr><td>AllReduce</td><td>RING</td><td>LL</td><td>148</td>"
                                    "<td>79.9 ms</td><td>354 µs</td><td>35.4 ms</td></tr>"),
                       "%s", html);
    free(html);
    cp_case_result_free(&c);
}
