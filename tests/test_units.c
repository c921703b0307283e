/* The one table of units and names (cuproof/units.h) at its edges. */
#include <criterion/criterion.h>

#include <cuproof/units.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Durations: µs below 1 ms, three significant digits, the unit moved where
 * rounding reaches 1000 of it. */
Test(units, durations_at_their_edges)
{
    char b[32];
    cr_expect_str_eq(cp_fmt_ms(0, b, sizeof b), "0 ms");
    cr_expect_str_eq(cp_fmt_ms(-0.5, b, sizeof b), "-");
    cr_expect_str_eq(cp_fmt_ms(1.0 / 0.0, b, sizeof b), "-");
    cr_expect_str_eq(cp_fmt_ms(1e-6, b, sizeof b), "1.00 ns");
    cr_expect_str_eq(cp_fmt_ms(0.00045, b, sizeof b), "450 ns");
    cr_expect_str_eq(cp_fmt_ms(0.001, b, sizeof b), "1.00 µs");
    cr_expect_str_eq(cp_fmt_ms(0.0086, b, sizeof b), "8.60 µs");
    cr_expect_str_eq(cp_fmt_ms(0.004, b, sizeof b), "4.00 µs");
    cr_expect_str_eq(cp_fmt_ms(0.9994, b, sizeof b), "999 µs");
    /* 999.5 µs would round to "1000 µs": it is 1.00 ms. */
    cr_expect_str_eq(cp_fmt_ms(0.9995, b, sizeof b), "1.00 ms");
    cr_expect_str_eq(cp_fmt_ms(1, b, sizeof b), "1.00 ms");
    cr_expect_str_eq(cp_fmt_ms(34, b, sizeof b), "34.0 ms");
    cr_expect_str_eq(cp_fmt_ms(999.6, b, sizeof b), "1.00 s");
    cr_expect_str_eq(cp_fmt_ms(2087, b, sizeof b), "2.09 s");
    cr_expect_float_eq(cp_fmt_ms_shown(0.0086), 0.0086, 1e-12);
    cr_expect_float_eq(cp_fmt_ms_shown(2087), 2090, 1e-9);
}

/* A ratio beside its times can be recomputed from them: more digits in
 * the times where three would not give it back. */
Test(units, a_ratio_comes_with_the_times_it_is_of)
{
    char x[32], a[32], b[32];
    cp_fmt_ratio_of(184.931, 4.302, x, sizeof x, a, b, sizeof a);
    cr_expect_str_eq(x, "43.0×");
    cr_expect_str_eq(a, "185 ms");
    cr_expect_str_eq(b, "4.30 ms");
    /* 2.09 s / 34.0 ms is 61.5, not the 61.4 shown: four digits. */
    cp_fmt_ratio_of(2087, 34, x, sizeof x, a, b, sizeof a);
    cr_expect_str_eq(x, "61.4×");
    cr_expect_str_eq(a, "2.087 s");
    cr_expect_str_eq(b, "34.00 ms");
    /* The "0.84x (0.004 ms against 0.003 ms)". */
    cp_fmt_ratio_of(0.00361, 0.0043, x, sizeof x, a, b, sizeof a);
    cr_expect_str_eq(x, "0.840×");
    cr_expect_str_eq(a, "3.61 µs");
    cr_expect_str_eq(b, "4.30 µs");
    /* compare's three decimals: 172.74 and 173.16 give back 1.002. */
    cp_fmt_ms_pair(173.157, 172.741, 3, a, b, sizeof a);
    double na = strtod(a, NULL), nb = strtod(b, NULL);
    char r[16], want[16];
    snprintf(r, sizeof r, "%.3f", na / nb);
    snprintf(want, sizeof want, "%.3f", 173.157 / 172.741);
    cr_expect_str_eq(r, want, "%s / %s", a, b);
    cr_expect_str_eq(cp_fmt_times(0, x, sizeof x), "0×");
    cr_expect_str_eq(cp_fmt_times(1.0 / 0.0, x, sizeof x), "-");
}

/* Counts agree with their unit; shares are percentages. */
Test(units, counts_agree_and_shares_are_percentages)
{
    char b[64];
    cr_expect_str_eq(cp_fmt_count(1, "kernels", b, sizeof b), "1 kernel");
    cr_expect_str_eq(cp_fmt_count(0, "kernels", b, sizeof b), "0 kernels");
    cr_expect_str_eq(cp_fmt_count(2, "copies", b, sizeof b), "2 copies");
    cr_expect_str_eq(cp_fmt_count(1, "copies", b, sizeof b), "1 copy");
    cr_expect_str_eq(cp_fmt_count(12800, "kernels", b, sizeof b), "12800 kernels");
    cr_expect_str_eq(cp_fmt_count(1, "widgets", b, sizeof b), "1 widgets", "unknown: as given");
    cr_expect_str_eq(cp_unit_agree("checks", 1), "check");
    cr_expect_str_eq(cp_fmt_value(0.2923, "ratio", b, sizeof b), "29%");
    cr_expect_str_eq(cp_fmt_value(0, "ratio", b, sizeof b), "0%");
    cr_expect_str_eq(cp_fmt_value(0.001083, "ratio", b, sizeof b), "0.11%");
    cr_expect_str_eq(cp_fmt_value(1.285, "ratio", b, sizeof b), "1.28", "above 1: no share");
    cr_expect_str_eq(cp_fmt_value(42.99, "x", b, sizeof b), "43.0×");
    cr_expect_str_eq(cp_fmt_value(0.0086, "ms", b, sizeof b), "8.60 µs");
    cr_expect_str_eq(cp_fmt_value(216.7, "ns", b, sizeof b), "217 ns");
    cr_expect_str_eq(cp_fmt_value(10.4, "us", b, sizeof b), "10.4 µs");
    cr_expect_str_eq(cp_fmt_value(1, "launches", b, sizeof b), "1 launch");
    cr_expect_str_eq(cp_fmt_value(535.6, "MiB", b, sizeof b), "536 MiB");
    cr_expect_str_eq(cp_fmt_percent(0.00001, b, sizeof b), "under 0.01%");
    cr_expect_str_eq(cp_fmt_fraction(0.823457, b, sizeof b), "0.823457 (82.3%)");
    cr_expect_str_eq(cp_fmt_fraction(0, b, sizeof b), "0 (0%)");
    /* What an older cuproof recorded, shown in today's form. */
    cr_expect_str_eq(cp_fmt_measured("1 copies", b, sizeof b), "1 copy");
    cr_expect_str_eq(cp_fmt_measured("0.720729 ratio", b, sizeof b), "0.720729 (72.1%)");
    cr_expect_str_eq(cp_fmt_measured("1 device-to-device copy", b, sizeof b),
                     "1 device-to-device copy");
    cr_expect_str_eq(cp_fmt_measured("3 kernels, 1 lane", b, sizeof b), "3 kernels, 1 lane");
    cr_expect_str_eq(cp_fmt_measured("1 contexts, 1 lanes", b, sizeof b), "1 context, 1 lane");
    cr_expect_str_eq(cp_fmt_measured("11 contexts, 21 lanes, 1/1 runs, 0.1 ms", b, sizeof b),
                     "11 contexts, 21 lanes, 1/1 runs, 0.1 ms", "only a count of one");
    cr_expect_str_eq(cp_fmt_measured("1 lanesque", b, sizeof b), "1 lanesque");
    char small[8];
    cr_expect_str_eq(cp_fmt_measured("1 contexts, 1 lanes", small, sizeof small), "1 conte",
                     "cut to fit, terminated");
}

/* A figure's name without the unit it repeats. */
Test(units, figure_names_do_not_repeat_their_unit)
{
    char b[96];
    cr_expect_str_eq(cp_fmt_figure_name("source-kernel launch call ms", "ms", b, sizeof b),
                     "source-kernel launch call");
    cr_expect_str_eq(cp_fmt_figure_name("global ns per generation", "ns", b, sizeof b),
                     "global per generation");
    cr_expect_str_eq(cp_fmt_figure_name("msgs ms", "ms", b, sizeof b), "msgs");
    cr_expect_str_eq(cp_fmt_figure_name("speedup sync → graph", "x", b, sizeof b),
                     "speedup sync → graph");
    cr_expect_str_eq(cp_fmt_figure_name("median time", "ms", b, sizeof b), "median time");
}

/* API names without CUPTI's version suffix; other names whole. */
Test(units, api_names_lose_their_version_suffix)
{
    cr_expect_eq(cp_api_name_len("cudaMemcpyAsync_v3020"), strlen("cudaMemcpyAsync"));
    cr_expect_eq(cp_api_name_len("cuCtxDestroy_v2"), strlen("cuCtxDestroy"));
    cr_expect_eq(cp_api_name_len("cudaLaunchKernel"), strlen("cudaLaunchKernel"));
    cr_expect_eq(cp_api_name_len("_v2"), 3, "nothing before the suffix: kept");
    cr_expect_eq(cp_api_name_len("a_v"), 3, "no digits: no suffix");
    cp_activity api = {.kind = CP_ACT_RUNTIME, .name = "cudaMemcpyAsync_v3020"};
    size_t len;
    const char *s = cp_activity_label(&api, &len);
    cr_expect_eq(s, api.name, "the interned name itself, so that pointers still match");
    cr_expect_eq(len, strlen("cudaMemcpyAsync"));
    char buf[64];
    cr_expect_str_eq(cp_activity_label_str(&api, buf, sizeof buf), "cudaMemcpyAsync");
    /* A kernel's name is its own, whatever it ends with. */
    cp_activity k = {.kind = CP_ACT_KERNEL, .name = "scale_v2"};
    cr_expect_str_eq(cp_activity_label_str(&k, buf, sizeof buf), "scale_v2");
    cr_expect_eq(cp_activity_label_str(&k, buf, sizeof buf), k.name);
}

/* The legacy default stream by name, the others by number. */
Test(units, the_legacy_default_stream_is_named)
{
    cp_trace t;
    cp_trace_init(&t);
    char b[48];
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 7, b, sizeof b), "stream 7");
    t.has_legacy_stream = true;
    t.legacy_device = 0;
    t.legacy_context = 1;
    t.legacy_stream = 7;
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 7, b, sizeof b), "default stream");
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 2, 7, b, sizeof b), "stream 7", "another context");
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 944, b, sizeof b), "stream 944");
    cr_expect_str_eq(cp_stream_label(NULL, 0, 0, 1, 7, b, sizeof b), "stream 7");
    cp_trace_free(&t);
}

/* A stream the program named shows its name, with its number beside it:
 * two streams of one name stay apart, and the legacy stream keeps saying
 * what it is. */
Test(units, a_named_stream_shows_its_name_and_number)
{
    cp_trace t;
    cp_trace_init(&t);
    char b[CP_STREAM_LABEL_MAX];
    t.has_legacy_stream = true;
    t.legacy_context = 1;
    t.legacy_stream = 7;
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 0, 1, 13, "copy-in"}), 0);
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 0, 1, 14, "copy-in"}), 0);
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 13, b, sizeof b), "copy-in (stream 13)");
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 14, b, sizeof b), "copy-in (stream 14)");
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 15, b, sizeof b), "stream 15", "unnamed");
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 7, b, sizeof b), "default stream");
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 0, 1, 7, "main"}), 0);
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 7, b, sizeof b), "main (default stream)");
    /* A later name is the stream's name; an empty one names nothing. */
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 0, 1, 13, "upload"}), 0);
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 0, 1, 16, ""}), 0);
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 13, b, sizeof b), "upload (stream 13)");
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 16, b, sizeof b), "stream 16");
    cr_expect_eq(t.nstream_names, 3);
    cp_trace_free(&t);
}

/* A name belongs to its stream of its context, device and process: the
 * same stream number elsewhere is not named by it. */
Test(units, a_stream_name_labels_only_its_own_stream)
{
    cp_trace t;
    cp_trace_init(&t);
    char b[CP_STREAM_LABEL_MAX];
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 0, 2, 13, "other ctx"}), 0);
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 1, 1, 13, "other GPU"}), 0);
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){1, 0, 1, 13, "other pid"}), 0);
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 1, 13, b, sizeof b), "stream 13");
    cr_expect_str_eq(cp_stream_label(&t, 0, 0, 2, 13, b, sizeof b), "other ctx (stream 13)");
    cr_expect_str_eq(cp_stream_label(&t, 1, 0, 1, 13, b, sizeof b), "other pid (stream 13)");
    cr_expect_null(cp_trace_stream_name(&t, 0, 0, 1, 13));
    cr_expect_null(cp_trace_stream_name(NULL, 0, 0, 1, 13));
    cp_trace_free(&t);
}

/* A long name is cut, on a whole character, and the number kept. */
Test(units, a_long_stream_name_is_cut_not_its_number)
{
    cp_trace t;
    cp_trace_init(&t);
    char b[25];
    /* "ééé…": two-byte characters, so a cut at a byte count lands mid one. */
    cr_assert_eq(cp_trace_name_stream(&t, &(cp_stream_name){0, 0, 1, 944,
                                                            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                                                            "\xc3\xa9\xc3\xa9"}),
                 0);
    cp_stream_label(&t, 0, 0, 1, 944, b, sizeof b);
    /* 24 bytes: 13 for " (stream 944)", 11 for the name, cut back to 10. */
    cr_expect_str_eq(b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 (stream 944)");
    cp_trace_free(&t);
}

/* A copy's overlap is said only where there was a copy. */
Test(units, copy_overlap_only_where_there_were_copies)
{
    char b[96];
    cr_expect_str_eq(cp_fmt_copy_overlap(true, 0.8234, false, b, sizeof b),
                     "copies overlapped kernels for 82% of copy time");
    cr_expect_str_eq(cp_fmt_copy_overlap(true, 0, true, b, sizeof b),
                     "copies overlapped kernels for 0% of its copy time");
    cr_expect_str_eq(cp_fmt_copy_overlap(false, 0, false, b, sizeof b), "no copies");
}
