#include "cli.h"

#include <cuproof/report.h>
#include <cuproof/case.h>
#include <cuproof/device.h>
#include <cuproof/runner.h>
#include <cuproof/version.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char usage[] =
    "usage: cuproof <command> [options]\n"
    "\n"
    "commands:\n"
    "  list                      list the cases, one per line: name and title\n"
    "  run [CASE...]             run the named cases (all when none are named)\n"
    "  compare OLD.json NEW.json [--threshold F]\n"
    "                            medians side by side with a noise-aware verdict, changed\n"
    "                            checks and claims; exit 1 when a variant is slower by more\n"
    "                            than F (default 0.10) or a check now fails\n"
    "  gpus [--ctest-spec FILE] [--slots N]\n"
    "                            list the GPUs; write ctest's resource spec for them\n"
    "  timeline OUT.html TRACE.json...\n"
    "                            a page of timelines drawn from recorded trace files\n"
    "  export TRACE.json DIR     write each variant of a recorded trace file as a Chrome\n"
    "                            trace (DIR/CASE.VARIANT.perfetto.json) for ui.perfetto.dev\n"
    "  help                      show this text\n"
    "\n"
    "run options:\n"
    "  --profile ci|full         problem sizes: ci (small, the default) or full (the sources')\n"
    "  --repeat N                timed runs per variant, 1..1000 (default 3 for ci, 5 for full)\n"
    "  --warmup N                untimed runs before them, 0..100 (default 1)\n"
    "  --out DIR                 where report.json, report.html and traces go\n"
    "                            (default cuproof-out; created if missing)\n"
    "  --no-trace                skip the traced run of each variant\n"
    "  --devices 0,1,...         spread the cases over these GPUs (one at a time)\n"
    "\n"
    "run writes CASE.trace.json and, per traced variant, CASE.VARIANT.perfetto.json.\n"
    "\n"
    "Exit status: 0 all cases passed or were skipped, 1 a case failed, 2 bad usage.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "cuproof: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see cuproof --help)\n");
    return CP_EXIT_USAGE;
}

/* Parses a decimal integer in [lo, hi]; false for anything else. */
static bool parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* Creates `dir` and its parents; fails when a component is not a directory
 * or cannot be created, or when the directory is not writable. */
static int write_chrome(const char *dir, const char *case_name, const char *variant,
                        const cp_trace *t);

static int make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return cp_failf(CP_EINVAL, "output directory path is too long");
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            struct stat st;
            if (stat(path, &st) != 0) {
                if (mkdir(path, 0777) != 0 && errno != EEXIST)
                    return cp_failf(CP_EIO, "cannot create output directory %s: %s", path,
                                    strerror(errno));
            } else if (!S_ISDIR(st.st_mode)) {
                return cp_failf(CP_EIO, "cannot create output directory %s: %s is not a directory",
                                dir, path);
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.cuproof-write-test", dir);
    FILE *f = fopen(probe, "w");
    if (!f)
        return cp_failf(CP_EIO, "output directory %s is not writable: %s", dir, strerror(errno));
    fclose(f);
    remove(probe);
    return 0;
}

static int cmd_list(void)
{
    for (size_t i = 0; i < cp_registry_count(); i++) {
        const cp_case_def *d = cp_registry_at(i);
        printf("%-28s %s\n", cp_case_name(d), d->title ? d->title : "");
    }
    return CP_EXIT_OK;
}

static void progress_line(size_t i, size_t n, const cp_case_result *c)
{
    printf("[%zu/%zu] %-7s %-28s ", i + 1, n, cp_status_name(c->status), c->name);
    if (c->gpu_name[0] && c->status != CP_STATUS_SKIPPED)
        printf("GPU %d  ", c->device);
    if (c->status == CP_STATUS_SKIPPED)
        printf("(%s)", c->skip_reason);
    else if (c->error[0])
        printf("(%s)", c->error);
    else if (c->nfigures)
        printf("%s %.4g %s", c->figures[c->nfigures - 1].name, c->figures[c->nfigures - 1].value,
               c->figures[c->nfigures - 1].unit);
    for (size_t k = 0; k < c->nchecks; k++)
        if (c->checks[k].status == CP_CHECK_FAILED)
            printf("\n        check failed: %s: expected %s, measured %s", c->checks[k].name,
                   c->checks[k].expected, c->checks[k].measured);
    printf("\n");
    fflush(stdout);
}

static int cmd_run(int argc, char **argv)
{
    cp_run_opts o = {.profile = CP_PROFILE_CI, .repeat = 0, .warmup = 1, .trace = true};
    const char *out_dir = "cuproof-out";
    const char *devices_arg = NULL;
    int devices[CP_MAX_DEVICES], ndevices = 0;
    const cp_case_def **sel = calloc(cp_registry_count() + (size_t)argc, sizeof *sel);
    size_t nsel = 0;
    int status = CP_EXIT_OK;
    cp_report report = {0};
    if (!sel)
        return usage_error("%s", "out of memory");

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--profile") == 0) {
            if (!val || (strcmp(val, "ci") != 0 && strcmp(val, "full") != 0)) {
                status = usage_error("unknown profile '%s': use ci or full", val ? val : "");
                goto out;
            }
            o.profile = strcmp(val, "full") == 0 ? CP_PROFILE_FULL : CP_PROFILE_CI;
            i++;
        } else if (strcmp(a, "--repeat") == 0) {
            if (!parse_int(val, 1, 1000, &o.repeat)) {
                status = usage_error("--repeat '%s': expected an integer from 1 to 1000",
                                     val ? val : "");
                goto out;
            }
            i++;
        } else if (strcmp(a, "--warmup") == 0) {
            if (!parse_int(val, 0, 100, &o.warmup)) {
                status = usage_error("--warmup '%s': expected an integer from 0 to 100",
                                     val ? val : "");
                goto out;
            }
            i++;
        } else if (strcmp(a, "--out") == 0) {
            if (!val || !*val) {
                status = usage_error("%s", "--out needs a directory");
                goto out;
            }
            out_dir = val;
            i++;
        } else if (strcmp(a, "--devices") == 0) {
            if (!val) {
                status = usage_error("%s", "--devices needs GPU ids such as 0,1");
                goto out;
            }
            devices_arg = val;
            i++;
        } else if (strcmp(a, "--no-trace") == 0) {
            o.trace = false;
        } else if (a[0] == '-') {
            status = usage_error("unknown option '%s'", a);
            goto out;
        } else {
            const cp_case_def *d = cp_registry_find(a);
            if (!d) {
                status = usage_error("unknown case '%s' (cuproof list shows the cases)", a);
                goto out;
            }
            sel[nsel++] = d;
        }
    }
    if (nsel == 0)
        for (size_t i = 0; i < cp_registry_count(); i++)
            sel[nsel++] = cp_registry_at(i);
    if (o.repeat == 0)
        o.repeat = o.profile == CP_PROFILE_FULL ? 5 : 3;
    if (make_dirs(out_dir) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = CP_EXIT_USAGE;
        goto out;
    }

    /* CUPTI before the first CUDA call (DESIGN.md's tracing rules). */
    cp_tracing_init();
    snprintf(report.tool_version, sizeof report.tool_version, "%s", cp_version());
    snprintf(report.profile, sizeof report.profile, "%s",
             o.profile == CP_PROFILE_FULL ? "full" : "ci");
    report.repeat = o.repeat;
    time_t now = time(NULL);
    strftime(report.date, sizeof report.date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    report.traced = cp_tracing_available() && o.trace;
    snprintf(report.untraced_reason, sizeof report.untraced_reason, "%s",
             !o.trace ? "tracing was not requested (--no-trace)"
                      : cp_tracing_unavailable_reason());
    if (cp_env_discover(&report.env) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = CP_EXIT_USAGE;
        goto out;
    }
    if (devices_arg) {
        if (!report.env.has_device) {
            status = usage_error("--devices: %s", report.env.no_device_reason);
            goto out;
        }
        if (cp_parse_device_list(devices_arg, report.env.device_count, devices, CP_MAX_DEVICES,
                                 &ndevices) < 0) {
            status = usage_error("%s", cp_last_error());
            goto out;
        }
        if (cp_env_use_device(&report.env, devices[0]) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = CP_EXIT_FAILED;
            goto out;
        }
    }
    if (!report.env.has_device)
        printf("cuproof: %s; GPU cases will be skipped\n", report.env.no_device_reason);
    else
        printf("cuproof: %s (device %d, sm_%d%d, %d SMs), profile %s, %d timed runs%s\n",
               report.env.gpu_name, report.env.device, report.env.cc_major,
               report.env.cc_minor, report.env.sm_count, report.profile, o.repeat,
               report.traced ? " + 1 traced" : ", untraced");
    if (ndevices > 1) {
        printf("cuproof: cases spread over GPUs");
        for (int k = 0; k < ndevices; k++)
            printf(" %d", devices[k]);
        printf(", one case at a time (ctest -j with a resource spec runs them at once)\n");
    }
    if (o.trace && !cp_tracing_available() && report.env.has_device)
        printf("cuproof: running untraced: %s\n", cp_tracing_unavailable_reason());

    report.cases = calloc(nsel, sizeof *report.cases);
    if (!report.cases) {
        status = CP_EXIT_FAILED;
        goto out;
    }
    int fatal = 0;
    char fatal_msg[1024] = "";
    for (size_t i = 0; i < nsel; i++) {
        cp_case_result *c = &report.cases[report.ncases++];
        if (fatal && !sel[i]->cpu_only) {
            /* A sticky CUDA error leaves this process's context unusable. */
            snprintf(c->name, sizeof c->name, "%s", cp_case_name(sel[i]));
            c->status = CP_STATUS_FAILED;
            snprintf(c->error, sizeof c->error, "not run: an earlier case left the device "
                     "unusable (%s)", fatal_msg);
        } else {
            /* With --devices, case i runs on the (i mod n)th GPU listed. */
            cp_env env = report.env;
            int rc = 0;
            if (ndevices > 1 && cp_env_use_device(&env, devices[i % (size_t)ndevices]) < 0) {
                fprintf(stderr, "cuproof: %s\n", cp_last_error());
                status = CP_EXIT_FAILED;
                goto out;
            }
            rc = cp_run_case(sel[i], &env, &o, c);
            /* Only a sticky error (the context is lost) stops the GPU
             * cases after this one; the case's own report says what
             * failed either way. */
            if (rc < 0 && !cp_device_usable()) {
                fatal = rc;
                snprintf(fatal_msg, sizeof fatal_msg, "%s", c->error);
            }
        }
        progress_line(i, nsel, c);
        if (c->status == CP_STATUS_FAILED)
            status = CP_EXIT_FAILED;
        bool traced = false;
        for (size_t v = 0; v < c->nvariants; v++)
            traced = traced || c->variants[v].traced;
        if (traced) {
            char path[PATH_MAX + 128];
            snprintf(path, sizeof path, "%s/%s.trace.json", out_dir, c->name);
            if (cp_trace_file_write(c, c->gpu_name[0] ? c->gpu_name : report.env.gpu_name,
                                    path) < 0) {
                fprintf(stderr, "cuproof: %s\n", cp_last_error());
                status = CP_EXIT_FAILED;
            }
            for (size_t v = 0; v < c->nvariants; v++)
                if (c->variants[v].traced &&
                    write_chrome(out_dir, c->name, c->variants[v].name, &c->variants[v].trace) < 0) {
                    fprintf(stderr, "cuproof: %s\n", cp_last_error());
                    status = CP_EXIT_FAILED;
                }
        }
    }
    if (cp_report_write(&report, out_dir) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = CP_EXIT_FAILED;
        goto out;
    }
    size_t np = 0, nf = 0, ns = 0;
    for (size_t i = 0; i < report.ncases; i++) {
        np += report.cases[i].status == CP_STATUS_PASSED;
        nf += report.cases[i].status == CP_STATUS_FAILED;
        ns += report.cases[i].status == CP_STATUS_SKIPPED;
    }
    printf("cuproof: %zu cases: %zu passed, %zu failed, %zu skipped; report in %s/report.json "
           "and %s/report.html\n",
           report.ncases, np, nf, ns, out_dir, out_dir);
out:
    for (size_t i = 0; i < report.ncases; i++)
        cp_case_result_free(&report.cases[i]);
    free(report.cases);
    free(sel);
    cp_tracing_shutdown();
    return status;
}

/* cuproof gpus [--ctest-spec FILE] [--slots N]: lists the GPUs the runtime
 * sees and writes ctest's resource spec for them. Exit 0; 1 with no GPU or
 * an unwritable file; 2 for bad usage. */
static int cmd_gpus(int argc, char **argv)
{
    const char *spec = NULL;
    int slots = 1;
    for (int i = 0; i < argc; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--ctest-spec") == 0 && val && *val) {
            spec = val;
            i++;
        } else if (strcmp(argv[i], "--slots") == 0) {
            if (!parse_int(val, 1, 64, &slots))
                return usage_error("--slots '%s': expected an integer from 1 to 64",
                                   val ? val : "");
            i++;
        } else {
            return usage_error("gpus takes [--ctest-spec FILE] [--slots N], got '%s'", argv[i]);
        }
    }
    cp_env env;
    if (cp_env_discover(&env) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_USAGE;
    }
    if (!env.has_device) {
        fprintf(stderr, "cuproof: %s\n", env.no_device_reason);
        return CP_EXIT_FAILED;
    }
    for (int d = 0; d < env.device_count; d++) {
        if (cp_env_use_device(&env, d) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            return CP_EXIT_FAILED;
        }
        printf("%d  %s  sm_%d%d  %d SMs  %.1f GiB\n", d, env.gpu_name, env.cc_major,
               env.cc_minor, env.sm_count, (double)env.total_mem / (1 << 30));
    }
    if (!spec)
        return CP_EXIT_OK;
    char *json = cp_ctest_spec_json(env.device_count, slots);
    int rc = json ? cp_write_file(spec, json) : -1;
    free(json);
    if (rc < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_FAILED;
    }
    printf("cuproof: resource spec for %d GPUs (%d slots each) in %s\n", env.device_count, slots,
           spec);
    return CP_EXIT_OK;
}

/* DIR/CASE.VARIANT.perfetto.json from one traced run. Returns 0, CP_ENOMEM
 * or CP_EIO (naming the file). */
static int write_chrome(const char *dir, const char *case_name, const char *variant,
                        const cp_trace *t)
{
    char path[PATH_MAX + 256], title[160];
    snprintf(path, sizeof path, "%s/%s.%s.perfetto.json", dir, case_name, variant);
    snprintf(title, sizeof title, "cuproof %s / %s", case_name, variant);
    char *text = cp_chrome_trace(t, title);
    if (!text)
        return CP_ENOMEM;
    int rc = cp_write_file(path, text);
    free(text);
    return rc;
}

/* cuproof timeline OUT.html TRACE.json...: exit 0, 1 when a file cannot be
 * read or written, 2 for bad usage. */
static int cmd_timeline(int argc, char **argv)
{
    if (argc < 2 || argc - 1 > 64)
        return usage_error("%s", "timeline takes OUT.html and 1 to 64 trace files");
    int n = argc - 1, status = CP_EXIT_OK, loaded = 0;
    cp_trace_file *files = calloc((size_t)n, sizeof *files);
    char *html = NULL;
    if (!files)
        return CP_EXIT_FAILED;
    for (; loaded < n; loaded++)
        if (cp_trace_file_read(argv[1 + loaded], &files[loaded]) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = CP_EXIT_FAILED;
            goto out;
        }
    html = cp_trace_files_html(files, (size_t)n);
    if (!html || cp_write_file(argv[0], html) < 0) {
        fprintf(stderr, "cuproof: %s\n", html ? cp_last_error() : "out of memory");
        status = CP_EXIT_FAILED;
    }
out:
    for (int i = 0; i < loaded; i++)
        cp_trace_file_free(&files[i]);
    free(files);
    free(html);
    return status;
}

/* cuproof compare OLD NEW [--threshold F]: exit 0, 1 on regressions, 2 for
 * bad usage or files that are not comparable reports. */
static int cmd_compare(int argc, char **argv)
{
    double threshold = 0.10;
    if (argc == 4 && strcmp(argv[2], "--threshold") == 0) {
        char *end = NULL;
        threshold = strtod(argv[3], &end);
        if (!end || *end || !(threshold >= 0 && threshold < 100))
            return usage_error("--threshold wants a fraction such as 0.1, got '%s'", argv[3]);
    } else if (argc != 2) {
        return usage_error("%s", "compare takes OLD.json NEW.json [--threshold F]");
    }
    int regressions = 0;
    if (cp_compare_reports(argv[0], argv[1], threshold, stdout, &regressions) < 0)
        return usage_error("%s", cp_last_error());
    if (regressions) {
        printf("cuproof: %d regression%s\n", regressions, regressions == 1 ? "" : "s");
        return CP_EXIT_FAILED;
    }
    return CP_EXIT_OK;
}

/* cuproof export TRACE.json DIR: every variant of a recorded trace file as
 * a Chrome trace. Exit 0, 1 when a file cannot be read, parsed or written,
 * 2 for bad usage. */
static int cmd_export(int argc, char **argv)
{
    if (argc != 2)
        return usage_error("%s", "export takes a trace file and an output directory");
    cp_trace_file f;
    if (cp_trace_file_read(argv[0], &f) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        return CP_EXIT_FAILED;
    }
    int status = CP_EXIT_OK;
    if (make_dirs(argv[1]) < 0) {
        fprintf(stderr, "cuproof: %s\n", cp_last_error());
        status = CP_EXIT_FAILED;
    }
    for (size_t i = 0; i < f.nvariants && status == CP_EXIT_OK; i++) {
        if (write_chrome(argv[1], f.case_name, f.variant[i], &f.trace[i]) < 0) {
            fprintf(stderr, "cuproof: %s\n", cp_last_error());
            status = CP_EXIT_FAILED;
        } else {
            printf("%s/%s.%s.perfetto.json\n", argv[1], f.case_name, f.variant[i]);
        }
    }
    cp_trace_file_free(&f);
    return status;
}

int cp_cli_main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("%s", "missing command: list, run or help");
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return CP_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("cuproof %s\n", cp_version());
        return CP_EXIT_OK;
    }
    if (strcmp(cmd, "list") == 0) {
        if (argc > 2)
            return usage_error("list takes no arguments, got '%s'", argv[2]);
        return cmd_list();
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "gpus") == 0)
        return cmd_gpus(argc - 2, argv + 2);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(argc - 2, argv + 2);
    if (strcmp(cmd, "compare") == 0)
        return cmd_compare(argc - 2, argv + 2);
    if (strcmp(cmd, "timeline") == 0)
        return cmd_timeline(argc - 2, argv + 2);
    return usage_error("unknown command '%s'", cmd);
}
