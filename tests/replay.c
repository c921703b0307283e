/* The helpers of replay.h for the CPU tests that replay traces recorded
 * on an H100: load a fixture, find a variant, count kernels and copies,
 * compare a launch's shape; each fails the calling test with the reason. */
#include <cuproof/internal/tracefile.h>
#include "replay.h"

#include <cuproof/error.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

void replay_load_file(cp_trace_file *f, const char *file, const char *gpu)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CUPROOF_FIXTURES, file);
    cr_assert_eq(cp_trace_file_read(path, f), 0, "%s", cp_last_error());
    cr_assert_not_null(strstr(f->device, gpu), "%s", f->device);
}

void replay_load(cp_trace_file *f, const char *name)
{
    char file[256];
    snprintf(file, sizeof file, "%s-h100-ci.trace.json", name);
    replay_load_file(f, file, "H100");
}

cp_trace *replay_variant(cp_trace_file *f, const char *variant)
{
    for (size_t i = 0; i < f->nvariants; i++)
        if (strcmp(f->variants[i].name, variant) == 0)
            return &f->variants[i].trace;
    cr_assert_fail("variant %s not in the fixture", variant);
    return NULL;
}

size_t replay_kernels(const cp_trace *t, const cp_activity **last)
{
    size_t n = 0;
    *last = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].kind == CP_ACT_KERNEL) {
            n++;
            *last = &t->items[i];
        }
    return n;
}

size_t replay_copies(const cp_trace *t, cp_copy_dir dir, uint64_t *bytes)
{
    size_t n = 0;
    *bytes = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].kind == CP_ACT_MEMCPY && t->items[i].copy_dir == dir) {
            n++;
            *bytes += t->items[i].bytes;
        }
    return n;
}

bool replay_shape_is(const cp_activity *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                     unsigned by, unsigned bz)
{
    return k && k->grid[0] == gx && k->grid[1] == gy && k->grid[2] == gz && k->block[0] == bx &&
           k->block[1] == by && k->block[2] == bz;
}
