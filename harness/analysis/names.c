/*
 * "Did you mean": the known name nearest a misspelt one, and the list of
 * the known names, for every command's hint (expectations' metrics and
 * findings, case names).
 * Contracts in include/cuproof/internal/names.h.
 */
#include <cuproof/internal/names.h>

#include <stdio.h>
#include <string.h>

/* Edit distance between a and b (insertions, deletions, substitutions,
 * and a swap of two neighbours), at most 63 characters each; 99 beyond. */
static int distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 99;
    int d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
            best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *cp_nearest_name(const char *name, const void *defs, size_t n, size_t stride)
{
    const char *best = NULL;
    int least = (int)strlen(name) / 5 > 2 ? (int)strlen(name) / 5 : 2;
    for (size_t i = 0; i < n; i++) {
        const char *k = *(const char *const *)(const void *)((const char *)defs + i * stride);
        int d = distance(name, k);
        if (d <= least) {
            least = d;
            best = k;
        }
    }
    return best;
}

void cp_list_names(const void *items, size_t n, size_t stride, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        const char *name = *(const char *const *)(const void *)((const char *)items + i * stride);
        int w = snprintf(out + used, len - used, "%s%s", i ? ", " : "", name);
        used += w > 0 ? (size_t)w : 0;
    }
}
