/*
 * libFuzzer target: any bytes as expectation text. The parser must accept
 * them or reject them with an error, never crash or leak; what it accepts
 * must keep the promises of cuproof/expect.h, which later errors and the
 * checks against a trace's metrics rely on.
 */
#include <cuproof/expect.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(const cp_expectation *e, int first_line)
{
    if (!e->text || !e->text[0] || !e->scope || !e->name || !e->name[0])
        abort();
    if (e->line < first_line || e->scope_column < 1 || e->name_column < 1 || e->value_column < 1)
        abort();
    if (e->scope_arg && !e->scope_arg[0])
        abort();
    if (e->scope_arg && !e->scope[0])
        abort();
    /* Ranks: rank(N) holds a rank that compares with an int32_t one, and
     * never stands beside 'every rank' or 'rank spread' (which is one). */
    if (e->has_rank && (e->rank < 0 || e->every_rank))
        abort();
    if (e->spread_ranks && !e->every_rank)
        abort();
    if ((e->has_rank || e->every_rank) && e->rank_column < 1)
        abort();
    switch (e->kind) {
    case CP_EXPECT_COMPARE:
        if (!isfinite(e->value) || (unsigned)e->op > CP_OP_NE)
            abort();
        /* The operator must read back as one of the six, and a value
         * compared with itself must follow the operator's meaning. */
        if (strcmp(cp_expect_op_name(e->op), "?") == 0)
            abort();
        if (cp_expect_compare(e->value, e->op, e->value) !=
            (e->op == CP_OP_LE || e->op == CP_OP_GE || e->op == CP_OP_EQ))
            abort();
        break;
    case CP_EXPECT_FINDING:
    case CP_EXPECT_NO_FINDING:
        break;
    default:
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    /* One expectation parsed before, so that a failed parse can be seen to
     * leave the list as it was. */
    cp_expect_list list = {0};
    if (cp_expect_parse("seed: finding x", 1, &list) != 0 || list.n != 1)
        abort();
    int first_line = 1 + (int)(size % 7);
    int rc = cp_expect_parse(text, first_line, &list);
    if (rc == 0) {
        for (size_t i = 0; i < list.n; i++)
            check(&list.items[i], i == 0 ? 1 : first_line);
        /* Lines come in order. */
        for (size_t i = 2; i < list.n; i++)
            if (list.items[i].line <= list.items[i - 1].line)
                abort();
    } else if (rc >= 0 || list.n != 1 || strcmp(list.items[0].name, "x") != 0) {
        abort();
    }
    cp_expect_list_free(&list);
    free(text);
    return 0;
}
