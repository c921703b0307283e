/* Run-time compilation with NVRTC, which needs no GPU: a good source gives
 * a cubin; a bad one fails with the compiler's log in the error. */
#include <cuproof/error.h>
#include <cuproof/rtc.h>

#include "cp_src_mult_ker.h"
#include "cp_src_piecewise_scale.h"
#include "cp_src_scale_unroll.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(rtc, compiles_to_a_cubin)
{
    const char *src = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }";
    cp_rtc_program p;
    cr_assert_eq(cp_rtc_compile(src, "k.cu", 9, 0, NULL, 0, &p), 0, "%s", cp_last_error());
    cr_expect_gt(p.cubin_size, 16);
    cr_expect_eq(memcmp(p.cubin, "\x7f" "ELF", 4), 0, "a cubin is an ELF image");
    cr_expect_gt(p.compile_ms, 0.0);
    cr_expect_not_null(p.log);
    cp_rtc_program_free(&p);
    cr_expect_null(p.cubin);
}

Test(rtc, compile_error_shows_the_log)
{
    const char *src = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = undefined_y; }";
    cp_rtc_program p;
    cr_expect_eq(cp_rtc_compile(src, "broken.cu", 9, 0, NULL, 0, &p), CP_ENVRTC);
    cr_expect_not_null(strstr(cp_last_error(), "broken.cu"), "%s", cp_last_error());
    cr_expect_not_null(strstr(cp_last_error(), "undefined_y"), "%s", cp_last_error());
    cr_assert_not_null(p.log);
    cr_expect_not_null(strstr(p.log, "undefined_y"), "%s", p.log);
    cr_expect_null(p.cubin);
    cp_rtc_program_free(&p);
}

Test(rtc, options_reach_the_compiler_and_bad_ones_fail)
{
    const char *src = "extern \"C\" __global__ void k(float *x) { x[0] = FACTOR; }";
    const char *good[] = {"-DFACTOR=3.0f"};
    cp_rtc_program p;
    cr_expect_eq(cp_rtc_compile(src, "opt.cu", 8, 0, good, 1, &p), 0, "%s", cp_last_error());
    cp_rtc_program_free(&p);
    const char *bad[] = {"--no-such-option"};
    cr_expect_eq(cp_rtc_compile(src, "opt.cu", 8, 0, bad, 1, &p), CP_ENVRTC);
    cp_rtc_program_free(&p);
    cr_expect_eq(cp_rtc_compile(NULL, "x", 9, 0, NULL, 0, &p), CP_EINVAL);
    cr_expect_eq(cp_rtc_compile(src, "x", 0, 0, NULL, 0, &p), CP_EINVAL);
}

Test(rtc, elementwise_source_compiles_and_bad_bodies_fail)
{
    char *src = cp_rtc_elementwise("add_kernel", "float *a, float *b, float *c",
                                   "c[i] = a[i] + b[i]");
    cr_assert_not_null(src, "%s", cp_last_error());
    cr_expect_not_null(strstr(src, "c[i] = a[i] + b[i];"), "%s", src);
    cr_expect_not_null(strstr(src, "i += stride"), "a grid-stride loop: %s", src);
    cp_rtc_program p;
    cr_expect_eq(cp_rtc_compile(src, "add_kernel.cu", 9, 0, NULL, 0, &p), 0, "%s",
                 cp_last_error());
    cp_rtc_program_free(&p);
    free(src);
    src = cp_rtc_elementwise("bad", "float *a", "a[i] = b[i]");
    cr_assert_not_null(src);
    cr_expect_eq(cp_rtc_compile(src, "bad.cu", 9, 0, NULL, 0, &p), CP_ENVRTC);
    cr_expect_not_null(strstr(cp_last_error(), "\"b\""), "the log names b: %s", cp_last_error());
    cp_rtc_program_free(&p);
    free(src);
    cr_expect_null(cp_rtc_elementwise("2x", "float *a", "a[i] = 0"));
    cr_expect_null(cp_rtc_elementwise("k", "float *a", ""));
}

/* The error names the source line as well as giving the log. */
Test(rtc, compile_error_quotes_the_source_line)
{
    const char *src = "extern \"C\" __global__ void k(float *x)\n"
                      "{\n"
                      "    x[0] = not_declared + 1.0f;\n"
                      "}\n";
    cp_rtc_program p;
    cr_expect_eq(cp_rtc_compile(src, "line.cu", 9, 0, NULL, 0, &p), CP_ENVRTC);
    cr_expect_not_null(strstr(cp_last_error(), "line 3:     x[0] = not_declared + 1.0f;"), "%s",
                       cp_last_error());
    cp_rtc_program_free(&p);
}

/* Same source, options and architecture: one compilation. */
Test(rtc, cache_compiles_each_program_once)
{
    cp_rtc_cache_clear();
    const char *src = "extern \"C\" __global__ void k(float *x) { x[0] = SCALE; }";
    const char *a[] = {"-DSCALE=2.0f"}, *b[] = {"-DSCALE=3.0f"};
    const cp_rtc_program *p1, *p2, *p3, *p4;
    bool hit;
    cr_assert_eq(cp_rtc_compile_cached(src, "k.cu", 9, 0, a, 1, &p1, &hit), 0, "%s",
                 cp_last_error());
    cr_expect_not(hit);
    cr_assert_eq(cp_rtc_compile_cached(src, "k.cu", 9, 0, a, 1, &p2, &hit), 0);
    cr_expect(hit);
    cr_expect_eq(p1, p2, "the cached program itself");
    cr_assert_eq(cp_rtc_compile_cached(src, "k.cu", 9, 0, b, 1, &p3, &hit), 0);
    cr_expect_not(hit, "other options, another program");
    cr_assert_eq(cp_rtc_compile_cached(src, "k.cu", 8, 0, a, 1, &p4, &hit), 0);
    cr_expect_not(hit, "another architecture, another program");
    const char *bad = "extern \"C\" __global__ void k() { nope; }";
    cr_expect_eq(cp_rtc_compile_cached(bad, "bad.cu", 9, 0, NULL, 0, &p1, &hit), CP_ENVRTC);
    cr_expect_eq(cp_rtc_compile_cached(bad, "bad.cu", 9, 0, NULL, 0, &p1, &hit), CP_ENVRTC,
                 "failures are not cached");
    cr_expect_not(hit);
    cp_rtc_cache_clear();
}

/* The kernel source embedded at build time compiles at run time. */
Test(rtc, embedded_mult_ker_compiles)
{
    cr_expect_not_null(strstr(cp_src_mult_ker, "extern \"C\" __global__ void mult_ker"));
    cp_rtc_program p;
    cr_expect_eq(cp_rtc_compile(cp_src_mult_ker, "mult_ker.cu", 9, 0, NULL, 0, &p), 0, "%s",
                 cp_last_error());
    cp_rtc_program_free(&p);
}

/* The seed-004 kernels compile as the cases compile them; scale_unroll
 * insists on its factor. */
Test(rtc, seed_004_kernels_compile)
{
    const char *factors[] = {"-DUNROLL=1", "-DUNROLL=16"};
    cp_rtc_program p;
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(cp_rtc_compile(cp_src_scale_unroll, "scale_unroll.cu", 9, 0, &factors[i], 1,
                                    &p), 0, "%s", cp_last_error());
        cp_rtc_program_free(&p);
    }
    cr_expect_eq(cp_rtc_compile(cp_src_scale_unroll, "scale_unroll.cu", 9, 0, NULL, 0, &p),
                 CP_ENVRTC);
    cr_expect_not_null(strstr(cp_last_error(), "-DUNROLL"), "%s", cp_last_error());
    cp_rtc_program_free(&p);
    cr_expect_eq(cp_rtc_compile(cp_src_piecewise_scale, "piecewise_scale.cu", 9, 0, NULL, 0, &p),
                 0, "%s", cp_last_error());
    cp_rtc_program_free(&p);
}

/* A kernel that never loaded is refused before any CUDA call. */
Test(rtc, launch_needs_a_loaded_kernel)
{
    cp_rtc_kernel none = {0};
    dim3 one = {1, 1, 1};
    cr_expect_eq(cp_rtc_launch(&none, one, one, NULL, 0, 0), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "no loaded kernel"), "%s", cp_last_error());
    cr_expect_eq(cp_rtc_launch(NULL, one, one, NULL, 0, 0), CP_EINVAL);
}
