/*
 * A compared variant's times as the text and the page show them beside
 * its ratio (cp_cmp_shown_times, internal/compare.h). A file of its own
 * so that compare_text.c and compare_html.c reach it without calling
 * into compare.c, which calls them (tests/layers_test.sh forbids the
 * loop).
 */
#include <cuproof/internal/compare.h>

#include <cuproof/units.h>

void cp_cmp_shown_times(const cp_cmp_variant *v, int ratio_decimals, char *t_new, char *t_old,
                        size_t size)
{
    bool set = v->old_shown_ms > 0 && v->new_shown_ms > 0;
    cp_fmt_ms_pair(set ? v->new_shown_ms : v->new_median_ms,
                   set ? v->old_shown_ms : v->old_median_ms, ratio_decimals, t_new, t_old, size);
}

