/* cuproof metrics: the metric and finding tables that expectations use
 * (the program's, collective(OP)'s and per step's), and the rules of the work classes the communication metrics rest on
 * (CP_WORK_CLASS_MAP), as plain text or as the Markdown of docs/DESIGN.md. */
#include "cli.h"

#include <cuproof/metrics.h>
#include <cuproof/internal/steps.h>

#include <stdio.h>
#include <string.h>

int cp_cmd_metrics(int argc, char **argv)
{
    bool markdown = false;
    const cp_help_opt *table = cp_opts_metrics;
    for (int i = 0; i < argc; i++) {
        cp_arg g;
        int kind = cp_arg_next(table, argc, argv, &i, &g);
        if (kind == CP_ARG_BAD)
            return CP_EXIT_USAGE;
        if (kind == CP_ARG_OPERAND)
            return cp_usage_error("metrics takes [--markdown], got '%s'", g.operand);
        if (strcmp(g.opt, "--markdown") == 0)
            markdown = true;
        else
            return cp_opt_unparsed(g.opt);
    }
    size_t n = 0, nf = 0;
    const cp_metric_def *m = cp_metric_defs(&n);
    const cp_finding_def *f = cp_finding_defs(&nf);
    if (markdown) {
        printf("| metric | label | unit | definition |\n|---|---|---|---|\n");
        for (size_t i = 0; i < n; i++)
            printf("| `%s` | %s | %s | %s |\n", m[i].name, m[i].label, m[i].unit, m[i].meaning);
        printf("\n| finding | label | raised when |\n|---|---|---|\n");
        for (size_t i = 0; i < nf; i++)
            printf("| `%s` | %s | %s |\n", f[i].name, f[i].label, f[i].meaning);
        size_t nc = 0;
        const cp_metric_def *cm = cp_collective_metric_defs(&nc);
        printf("\n| collective(OP) metric | label | unit | definition |\n|---|---|---|---|\n");
        for (size_t i = 0; i < nc; i++)
            printf("| `%s` | %s | %s | %s |\n", cm[i].name, cm[i].label, cm[i].unit, cm[i].meaning);
        size_t ns = 0;
        const cp_metric_def *sm = cp_step_metric_defs(&ns);
        printf("\n| per step metric | label | unit | definition |\n|---|---|---|---|\n");
        for (size_t i = 0; i < ns; i++)
            printf("| `%s` | %s | %s | %s |\n", sm[i].name, sm[i].label, sm[i].unit, sm[i].meaning);
        printf("\n| class | rule |\n|---|---|\n");
        for (int c = 0; c < CP_CLASS_COUNT; c++)
            printf("| `%s` | %s |\n", cp_work_class_name((cp_work_class)c),
                   cp_work_class_rule((cp_work_class)c));
        return CP_EXIT_OK;
    }
    for (size_t i = 0; i < n; i++)
        printf("%-28s %-8s %s\n", m[i].name, m[i].unit, m[i].meaning);
    printf("\nfindings:\n");
    for (size_t i = 0; i < nf; i++)
        printf("%-28s %s\n", f[i].name, f[i].meaning);
    size_t nc = 0;
    const cp_metric_def *cm = cp_collective_metric_defs(&nc);
    printf("\ncollective(OP) (NCCL's kernels of operation OP: AllReduce, AllGather, ...):\n");
    for (size_t i = 0; i < nc; i++)
        printf("%-28s %-8s %s\n", cm[i].name, cm[i].unit, cm[i].meaning);
    size_t ns = 0;
    const cp_metric_def *sm = cp_step_metric_defs(&ns);
    printf("\nper step (each occurrence of an NVTX range alone: 'per step: METRIC OP N', "
           "'per step(NAME) p95: ...'):\n");
    for (size_t i = 0; i < ns; i++)
        printf("%-28s %-8s %s\n", sm[i].name, sm[i].unit, sm[i].meaning);
    printf("\nwork classes (the communication metrics' rules):\n");
    for (int c = 0; c < CP_CLASS_COUNT; c++)
        printf("%-28s %s\n", cp_work_class_name((cp_work_class)c),
               cp_work_class_rule((cp_work_class)c));
    return CP_EXIT_OK;
}
