/* The expectation grammar: what parses into what, and for each kind of
 * mistake the exact message, line and column the user sees. */
#include <cuproof/error.h>
#include <cuproof/expect.h>

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cp_expect_list list;

static void teardown(void)
{
    cp_expect_list_free(&list);
}

TestSuite(expect, .fini = teardown);

/* Parses text that must be valid and returns the number of expectations
 * it added. */
static size_t parse_ok(const char *text, int first_line)
{
    size_t before = list.n;
    cr_assert_eq(cp_expect_parse(text, first_line, &list), 0, "'%s': %s", text, cp_last_error());
    return list.n - before;
}

/* Parses one line that must fail with `code` and exactly `message`, and
 * checks that the list did not change. */
static void parse_fails(const char *text, int code, const char *message)
{
    size_t before = list.n;
    cr_expect_eq(cp_expect_parse(text, 1, &list), code, "'%s'", text);
    cr_expect_str_eq(cp_last_error(), message, "'%s'", text);
    cr_expect_eq(list.n, before, "'%s'", text);
}

static const cp_expectation *item(size_t i)
{
    cr_assert_lt(i, list.n);
    return &list.items[i];
}

Test(expect, every_operator)
{
    cr_assert_eq(parse_ok("a < 1\na <= 2\na > 3\na >= 4\na == 5\na != 6", 1), 6);
    const cp_expect_op ops[] = {CP_OP_LT, CP_OP_LE, CP_OP_GT, CP_OP_GE, CP_OP_EQ, CP_OP_NE};
    const char *names[] = {"<", "<=", ">", ">=", "==", "!="};
    for (size_t i = 0; i < 6; i++) {
        cr_expect_eq(item(i)->kind, CP_EXPECT_COMPARE);
        cr_expect_eq(item(i)->op, ops[i], "line %zu", i + 1);
        cr_expect_float_eq(item(i)->value, (double)(i + 1), 0);
        cr_expect_str_eq(cp_expect_op_name(ops[i]), names[i]);
        cr_expect_eq(item(i)->value_column, (int)strlen(names[i]) + 4);
    }
    cr_expect_str_eq(cp_expect_op_name((cp_expect_op)6), "?");
    cr_expect_str_eq(cp_expect_op_name((cp_expect_op)-1), "?");
}

Test(expect, scope_without_arg)
{
    cr_assert_eq(parse_ok("streams-pinned: copy_kernel_overlap_ratio > 0.5", 1), 1);
    const cp_expectation *e = item(0);
    cr_expect_eq(e->kind, CP_EXPECT_COMPARE);
    cr_expect_str_eq(e->scope, "streams-pinned");
    cr_expect_null(e->scope_arg);
    cr_expect_str_eq(e->name, "copy_kernel_overlap_ratio");
    cr_expect_eq(e->op, CP_OP_GT);
    cr_expect_float_eq(e->value, 0.5, 0);
    cr_expect_str_eq(e->text, "streams-pinned: copy_kernel_overlap_ratio > 0.5");
    cr_expect_eq(e->line, 1);
    cr_expect_eq(e->scope_column, 1);
    cr_expect_eq(e->name_column, 17);
    cr_expect_eq(e->value_column, 45);
}

Test(expect, scope_with_arg)
{
    cr_assert_eq(parse_ok("range(step): copy_kernel_overlap_ratio >= 0.4\n"
                          "  process( 1234 ) : x < 2\n"
                          "range (a:b(c) :y==0",
                          1),
                 3);
    cr_expect_str_eq(item(0)->scope, "range");
    cr_expect_str_eq(item(0)->scope_arg, "step");
    cr_expect_str_eq(item(0)->name, "copy_kernel_overlap_ratio");
    cr_expect_eq(item(0)->op, CP_OP_GE);
    cr_expect_float_eq(item(0)->value, 0.4, 0);
    cr_expect_eq(item(0)->name_column, 14);

    /* The argument is trimmed; the scope's column is that of its name. */
    cr_expect_str_eq(item(1)->scope, "process");
    cr_expect_str_eq(item(1)->scope_arg, "1234");
    cr_expect_str_eq(item(1)->text, "process( 1234 ) : x < 2");
    cr_expect_eq(item(1)->scope_column, 3);
    cr_expect_eq(item(1)->name_column, 21);
    cr_expect_eq(item(1)->value_column, 25);

    /* ARG holds anything but ')', ':' and '(' included. */
    cr_expect_str_eq(item(2)->scope, "range");
    cr_expect_str_eq(item(2)->scope_arg, "a:b(c");
    cr_expect_str_eq(item(2)->name, "y");
    cr_expect_eq(item(2)->op, CP_OP_EQ);
}

Test(expect, no_scope)
{
    cr_assert_eq(parse_ok("   span_ns < 2.5e6", 1), 1);
    const cp_expectation *e = item(0);
    cr_expect_str_eq(e->scope, "");
    cr_expect_null(e->scope_arg);
    cr_expect_str_eq(e->name, "span_ns");
    cr_expect_float_eq(e->value, 2.5e6, 0);
    cr_expect_eq(e->scope_column, 4);
    cr_expect_eq(e->name_column, 4);
    cr_expect_eq(e->value_column, 14);
}

Test(expect, finding_and_no_finding)
{
    cr_assert_eq(parse_ok("streams-pageable: finding cuda_memcpy_async\n"
                          "streams-pinned: no finding cuda_memcpy_async\n"
                          "no \t finding  serialized_streams",
                          1),
                 3);
    cr_expect_eq(item(0)->kind, CP_EXPECT_FINDING);
    cr_expect_str_eq(item(0)->scope, "streams-pageable");
    cr_expect_str_eq(item(0)->name, "cuda_memcpy_async");
    cr_expect_eq(item(0)->name_column, 27);
    cr_expect_eq(item(0)->value_column, 27);

    cr_expect_eq(item(1)->kind, CP_EXPECT_NO_FINDING);
    cr_expect_str_eq(item(1)->scope, "streams-pinned");
    cr_expect_str_eq(item(1)->name, "cuda_memcpy_async");
    cr_expect_eq(item(1)->name_column, 28);

    cr_expect_eq(item(2)->kind, CP_EXPECT_NO_FINDING);
    cr_expect_str_eq(item(2)->scope, "");
    cr_expect_str_eq(item(2)->name, "serialized_streams");
    cr_expect_eq(item(2)->scope_column, 1);
    cr_expect_eq(item(2)->name_column, 15);
}

/* Words that merely begin with a keyword are metrics. */
Test(expect, keywords_only_as_whole_first_words)
{
    cr_assert_eq(parse_ok("findings > 1\nnot_found == 0\nfinding_count != 2", 1), 3);
    cr_expect_eq(item(0)->kind, CP_EXPECT_COMPARE);
    cr_expect_str_eq(item(0)->name, "findings");
    cr_expect_str_eq(item(1)->name, "not_found");
    cr_expect_str_eq(item(2)->name, "finding_count");
}

Test(expect, comments_and_blank_lines)
{
    const char *text = "# pinned streams must overlap copies with kernels\n"
                       "\n"
                       "   \t \n"
                       "streams-pinned: peak_concurrent_kernels >= 2   # two at once\n"
                       "    # an indented comment\n"
                       "sync: copy_kernel_overlap_ns == 0#glued\n"
                       "#";
    cr_assert_eq(parse_ok(text, 1), 2);
    cr_expect_str_eq(item(0)->text, "streams-pinned: peak_concurrent_kernels >= 2");
    cr_expect_eq(item(0)->line, 4);
    cr_expect_float_eq(item(0)->value, 2.0, 0);
    cr_expect_str_eq(item(1)->text, "sync: copy_kernel_overlap_ns == 0");
    cr_expect_eq(item(1)->line, 6);
    cr_expect_eq(item(1)->op, CP_OP_EQ);

    cr_expect_eq(parse_ok("", 1), 0);
    cr_expect_eq(parse_ok("\n\n# only a comment\n", 1), 0);
    cr_expect_eq(list.n, 2);
}

/* The example of the documentation, whole. */
Test(expect, documented_example)
{
    const char *text = "# pinned streams must overlap copies with kernels\n"
                       "streams-pinned: copy_kernel_overlap_ratio > 0.5\n"
                       "streams-pinned: peak_concurrent_kernels >= 2\n"
                       "sync: copy_kernel_overlap_ns == 0\n"
                       "streams-pageable: finding cuda_memcpy_async\n"
                       "streams-pinned: no finding cuda_memcpy_async\n"
                       "span_ns < 2.5e6\n"
                       "range(step): copy_kernel_overlap_ratio >= 0.4\n";
    cr_assert_eq(parse_ok(text, 1), 7);
    const cp_expect_kind kinds[] = {CP_EXPECT_COMPARE, CP_EXPECT_COMPARE, CP_EXPECT_COMPARE,
                                    CP_EXPECT_FINDING, CP_EXPECT_NO_FINDING, CP_EXPECT_COMPARE,
                                    CP_EXPECT_COMPARE};
    const char *scopes[] = {"streams-pinned", "streams-pinned", "sync", "streams-pageable",
                            "streams-pinned", "", "range"};
    for (size_t i = 0; i < 7; i++) {
        cr_expect_eq(item(i)->kind, kinds[i], "item %zu", i);
        cr_expect_str_eq(item(i)->scope, scopes[i], "item %zu", i);
        cr_expect_eq(item(i)->line, (int)i + 2);
    }
    cr_expect_str_eq(item(6)->scope_arg, "step");
}

/* Lines are numbered from first_line, and successive calls append, as
 * for a file followed by --expect arguments. */
Test(expect, several_lines_and_first_line)
{
    cr_assert_eq(parse_ok("a > 1\n\n# c\nb < 2", 10), 2);
    cr_expect_eq(item(0)->line, 10);
    cr_expect_eq(item(1)->line, 13);
    cr_assert_eq(parse_ok("finding x", 20), 1);
    cr_expect_eq(item(2)->line, 20);
    cr_expect_str_eq(item(0)->name, "a");
    cr_expect_str_eq(item(2)->name, "x");

    cr_expect_eq(cp_expect_parse("a > 1\nb > 2\n\nc >", 5, &list), CP_EPARSE);
    cr_expect_str_eq(cp_last_error(),
                     "line 8, column 4: expected a number after '>', found end of line");
    cr_expect_eq(list.n, 3);
}

/* Enough lines that the arrays grow several times, in two calls. */
Test(expect, many_lines)
{
    size_t size = 1000 * 32;
    char *text = malloc(size);
    cr_assert_not_null(text);
    size_t used = 0;
    for (int i = 0; i < 1000; i++)
        used += (size_t)snprintf(text + used, size - used, "m%d >= %d\n", i, i);
    cr_assert_eq(parse_ok(text, 1), 1000);
    cr_assert_eq(parse_ok(text, 1001), 1000);
    free(text);
    cr_expect_eq(list.items[999].line, 1000);
    cr_expect_str_eq(list.items[999].name, "m999");
    cr_expect_float_eq(list.items[999].value, 999.0, 0);
    cr_expect_eq(list.items[1999].line, 2000);
    cr_expect_str_eq(list.items[1000].name, "m0");
}

Test(expect, whitespace_variants)
{
    const char *text = "a>1\n"
                       "a >= 1\n"
                       "\ta\t<=\t1\t\n"
                       "  a<-1  \n"
                       "a!=+3\r\n"
                       "s:a==.5\n"
                       "range ( step ) : a>1e-3\n"
                       "\tno finding\tx\t# tabbed\n";
    cr_assert_eq(parse_ok(text, 1), 8);
    cr_expect_eq(item(0)->op, CP_OP_GT);
    cr_expect_eq(item(0)->value_column, 3);
    cr_expect_eq(item(1)->op, CP_OP_GE);
    cr_expect_eq(item(2)->op, CP_OP_LE);
    cr_expect_str_eq(item(2)->text, "a\t<=\t1");
    cr_expect_eq(item(2)->name_column, 2);
    cr_expect_eq(item(2)->value_column, 7);
    cr_expect_eq(item(3)->op, CP_OP_LT);
    cr_expect_float_eq(item(3)->value, -1.0, 0);
    cr_expect_eq(item(4)->op, CP_OP_NE);
    cr_expect_float_eq(item(4)->value, 3.0, 0);
    cr_expect_str_eq(item(4)->text, "a!=+3");
    cr_expect_str_eq(item(5)->scope, "s");
    cr_expect_float_eq(item(5)->value, 0.5, 0);
    cr_expect_str_eq(item(6)->scope, "range");
    cr_expect_str_eq(item(6)->scope_arg, "step");
    cr_expect_float_eq(item(6)->value, 1e-3, 0);
    cr_expect_eq(item(7)->kind, CP_EXPECT_NO_FINDING);
    cr_expect_str_eq(item(7)->name, "x");
    cr_expect_eq(item(7)->name_column, 13);
}

Test(expect, unknown_operator)
{
    parse_fails("span_ns = 5", CP_EPARSE,
                "line 1, column 9: expected an operator (<, <=, >, >=, ==, !=), found '='");
    parse_fails("s: span_ns => 5", CP_EPARSE,
                "line 1, column 12: expected an operator (<, <=, >, >=, ==, !=), found '=>'");
    parse_fails("a<>1", CP_EPARSE,
                "line 1, column 2: expected an operator (<, <=, >, >=, ==, !=), found '<>'");
    parse_fails("a ~ 1", CP_EPARSE,
                "line 1, column 3: expected an operator (<, <=, >, >=, ==, !=), found '~'");
}

Test(expect, missing_operator)
{
    parse_fails("span_ns", CP_EPARSE,
                "line 1, column 8: expected an operator (<, <=, >, >=, ==, !=), found end of line");
    parse_fails("span_ns 5", CP_EPARSE,
                "line 1, column 9: expected an operator (<, <=, >, >=, ==, !=), found '5'");
    /* Without its ':' a scope is read as a metric. */
    parse_fails("sync span_ns < 5", CP_EPARSE,
                "line 1, column 6: expected an operator (<, <=, >, >=, ==, !=), found 'span_ns'");
}

Test(expect, missing_number)
{
    parse_fails("a >", CP_EPARSE,
                "line 1, column 4: expected a number after '>', found end of line");
    parse_fails("sync: copy_kernel_overlap_ns >= abc", CP_EPARSE,
                "line 1, column 33: expected a number after '>=', found 'abc'");
    parse_fails("a != # none", CP_EPARSE,
                "line 1, column 5: expected a number after '!=', found end of line");
}

Test(expect, malformed_numbers)
{
    parse_fails("a > 1.2.3", CP_EPARSE,
                "line 1, column 5: expected a number after '>', found '1.2.3'");
    parse_fails("a > 1e", CP_EPARSE, "line 1, column 5: expected a number after '>', found '1e'");
    parse_fails("a > .", CP_EPARSE, "line 1, column 5: expected a number after '>', found '.'");
    parse_fails("a > -", CP_EPARSE, "line 1, column 5: expected a number after '>', found '-'");
    parse_fails("a < 5ms", CP_EPARSE, "line 1, column 5: expected a number after '<', found '5ms'");
}

Test(expect, nan_inf_hex_rejected)
{
    parse_fails("a > nan", CP_EPARSE, "line 1, column 5: expected a number after '>', found 'nan'");
    parse_fails("a > NAN", CP_EPARSE, "line 1, column 5: expected a number after '>', found 'NAN'");
    parse_fails("a > inf", CP_EPARSE, "line 1, column 5: expected a number after '>', found 'inf'");
    parse_fails("a < -inf", CP_EPARSE,
                "line 1, column 5: expected a number after '<', found '-inf'");
    parse_fails("a < infinity", CP_EPARSE,
                "line 1, column 5: expected a number after '<', found 'infinity'");
    parse_fails("a == 0x10", CP_EPARSE,
                "line 1, column 6: expected a number after '==', found '0x10'");
    parse_fails("a == 0x1p3", CP_EPARSE,
                "line 1, column 6: expected a number after '==', found '0x1p3'");
}

Test(expect, number_out_of_range)
{
    parse_fails("span_ns < 1e999", CP_ERANGE, "line 1, column 11: number out of range '1e999'");
    parse_fails("a > -1e999", CP_ERANGE, "line 1, column 5: number out of range '-1e999'");
    parse_fails("a > 1e-999", CP_ERANGE, "line 1, column 5: number out of range '1e-999'");
    /* The largest double is still in range. */
    cr_assert_eq(parse_ok("a < 1.7976931348623157e308", 1), 1);
    cr_expect_float_eq(item(0)->value, 1.7976931348623157e308, 0);
}

Test(expect, trailing_garbage)
{
    parse_fails("a > 1 foo", CP_EPARSE, "line 1, column 7: unexpected 'foo' after the expectation");
    parse_fails("a > 1 2", CP_EPARSE, "line 1, column 7: unexpected '2' after the expectation");
    parse_fails("a > 1:", CP_EPARSE, "line 1, column 6: unexpected ':' after the expectation");
    parse_fails("finding x y", CP_EPARSE,
                "line 1, column 11: unexpected 'y' after the expectation");
    parse_fails("no finding x >= 1", CP_EPARSE,
                "line 1, column 14: unexpected '>=' after the expectation");
}

Test(expect, empty_scope)
{
    parse_fails(": a > 1", CP_EPARSE, "line 1, column 1: empty scope before ':'");
    parse_fails("  (x): a > 1", CP_EPARSE, "line 1, column 3: empty scope before '('");
}

Test(expect, unclosed_paren)
{
    parse_fails("range(step: a > 1", CP_EPARSE, "line 1, column 6: unclosed '(' in scope 'range'");
    /* '#' starts a comment even inside the argument. */
    parse_fails("process(#1): a > 1", CP_EPARSE,
                "line 1, column 8: unclosed '(' in scope 'process'");
}

Test(expect, empty_paren)
{
    parse_fails("range(): a > 1", CP_EPARSE, "line 1, column 6: empty argument in scope 'range()'");
    parse_fails("range( \t): a > 1", CP_EPARSE,
                "line 1, column 6: empty argument in scope 'range( \t)'");
}

Test(expect, missing_colon_after_arg)
{
    parse_fails("range(step) a > 1", CP_EPARSE,
                "line 1, column 13: expected ':' after 'range(step)', found 'a'");
    parse_fails("range(step)", CP_EPARSE,
                "line 1, column 12: expected ':' after 'range(step)', found end of line");
}

Test(expect, bad_metric_name)
{
    parse_fails("1abc > 2", CP_EPARSE, "line 1, column 1: invalid metric name '1abc'");
    parse_fails("s: span-ns > 1", CP_EPARSE, "line 1, column 4: invalid metric name 'span-ns'");
    parse_fails("s: > 1", CP_EPARSE,
                "line 1, column 4: expected a metric, 'finding' or 'no finding', found '>'");
    parse_fails("streams-pinned:", CP_EPARSE,
                "line 1, column 16: expected a metric, "
                "'finding' or 'no finding', found end of line");
}

Test(expect, finding_without_name)
{
    parse_fails("finding", CP_EPARSE,
                "line 1, column 8: expected a finding name after 'finding', found end of line");
    parse_fails("s: no finding # which?", CP_EPARSE,
                "line 1, column 14: expected a finding name after 'finding', found end of line");
    parse_fails("finding > 1", CP_EPARSE,
                "line 1, column 9: expected a finding name after 'finding', found '>'");
    parse_fails("finding 1x", CP_EPARSE, "line 1, column 9: invalid finding name '1x'");
    parse_fails("finding cuda-memcpy", CP_EPARSE,
                "line 1, column 9: invalid finding name 'cuda-memcpy'");
}

Test(expect, no_without_finding)
{
    parse_fails("no cuda_memcpy_async", CP_EPARSE,
                "line 1, column 4: expected 'finding' after 'no', found 'cuda_memcpy_async'");
    parse_fails("s: no", CP_EPARSE,
                "line 1, column 6: expected 'finding' after 'no', found end of line");
    parse_fails("no findings x", CP_EPARSE,
                "line 1, column 4: expected 'finding' after 'no', found 'findings'");
}

/* Long tokens are cut in messages, which stay one line. */
Test(expect, long_tokens_are_cut)
{
    parse_fails("a > 1 abcdefghijabcdefghijabcdefghijabcdefghijXYZ", CP_EPARSE,
                "line 1, column 7: unexpected 'abcdefghijabcdefghijabcdefghijabcdefghij...' "
                "after the expectation");
}

Test(expect, failed_parse_leaves_list_unchanged)
{
    cr_assert_eq(parse_ok("a > 1\nfinding x", 1), 2);
    cp_expectation *items = list.items;
    size_t cap = list.cap;
    cr_expect_eq(cp_expect_parse("b < 2\nc <= 3\nd >", 3, &list), CP_EPARSE);
    cr_expect_str_eq(cp_last_error(),
                     "line 5, column 4: expected a number after '>', found end of line");
    cr_expect_eq(list.n, 2);
    cr_expect_eq(list.cap, cap);
    cr_expect_eq(list.items, items);
    cr_expect_str_eq(item(0)->name, "a");
    cr_expect_str_eq(item(1)->name, "x");
    cr_expect_eq(cp_expect_parse("c > 1e999", 1, &list), CP_ERANGE);
    cr_expect_eq(list.n, 2);
}

Test(expect, null_arguments)
{
    cr_expect_eq(cp_expect_parse(NULL, 1, &list), CP_EINVAL);
    cr_expect_str_eq(cp_last_error(), "cp_expect_parse: text is NULL");
    cr_expect_eq(cp_expect_parse("a > 1", 1, NULL), CP_EINVAL);
    cr_expect_str_eq(cp_last_error(), "cp_expect_parse: list is NULL");
    cr_expect_eq(cp_expect_parse("a > 1", 0, &list), CP_EINVAL);
    cr_expect_eq(list.n, 0);
    cp_expect_list_free(NULL);
}

Test(expect, list_free_resets)
{
    cr_assert_eq(parse_ok("range(step): a > 1\nfinding y", 1), 2);
    cp_expect_list_free(&list);
    cr_expect_null(list.items);
    cr_expect_eq(list.n, 0);
    cr_expect_eq(list.cap, 0);
    cr_assert_eq(parse_ok("b < 1", 1), 1);
    cr_expect_str_eq(item(0)->name, "b");
}

Test(expect, compare_semantics)
{
    cr_expect(cp_expect_compare(1, CP_OP_LT, 2));
    cr_expect_not(cp_expect_compare(2, CP_OP_LT, 2));
    cr_expect(cp_expect_compare(2, CP_OP_LE, 2));
    cr_expect_not(cp_expect_compare(3, CP_OP_LE, 2));
    cr_expect(cp_expect_compare(3, CP_OP_GT, 2));
    cr_expect_not(cp_expect_compare(2, CP_OP_GT, 2));
    cr_expect(cp_expect_compare(2, CP_OP_GE, 2));
    cr_expect_not(cp_expect_compare(1, CP_OP_GE, 2));
    cr_expect(cp_expect_compare(0.0, CP_OP_EQ, -0.0));
    cr_expect_not(cp_expect_compare(1, CP_OP_EQ, 2));
    cr_expect(cp_expect_compare(1, CP_OP_NE, 2));
    cr_expect_not(cp_expect_compare(2, CP_OP_NE, 2));
    cr_expect(cp_expect_compare(INFINITY, CP_OP_GT, 1e308));
    cr_expect(cp_expect_compare(-INFINITY, CP_OP_LT, -1e308));
    /* A metric that could not be measured satisfies nothing, "!=" included. */
    const cp_expect_op ops[] = {CP_OP_LT, CP_OP_LE, CP_OP_GT, CP_OP_GE, CP_OP_EQ, CP_OP_NE};
    for (size_t i = 0; i < 6; i++) {
        cr_expect_not(cp_expect_compare(NAN, ops[i], 1), "%s", cp_expect_op_name(ops[i]));
        cr_expect_not(cp_expect_compare(1, ops[i], NAN), "%s", cp_expect_op_name(ops[i]));
    }
    cr_expect_not(cp_expect_compare(1, (cp_expect_op)42, 1));
}

/* What was measured is written as people read it: counts and times whole
 * (3198480 kernels, not 3.19848e+06), ratios to six digits. */
Test(expect, measured_values_are_written_whole_or_to_six_digits)
{
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse("kernels > 0\ncopy_kernel_overlap_ratio > 0.5\n", 1, &l), 0);
    cp_metrics m = {.kernels = 3198480, .copy_busy_ns = 1000, .copy_kernel_overlap_ratio = 0.8234567};
    char measured[128];
    cr_expect(cp_expect_eval(&l.items[0], &m, measured, sizeof measured));
    cr_expect_str_eq(measured, "3198480 kernels");
    cr_expect(cp_expect_eval(&l.items[1], &m, measured, sizeof measured));
    cr_expect_str_eq(measured, "0.823457 (82.3%)");
    cp_expect_list_free(&l);
}

/* `#! comm-pattern: PREFIX` sets the communication pattern and adds no
 * expectation; to older readers it is a comment. A later text's replaces
 * an earlier's; an unknown directive or a pattern that is no name's
 * prefix fails naming its line, leaving the list as it was. */
Test(expect, comm_pattern_directive)
{
    cr_expect_str_eq(list.comm_pattern, "");
    cr_assert_eq(parse_ok("#! comm-pattern: gloo\nkernels > 0\n", 1), 1);
    cr_expect_str_eq(list.comm_pattern, "gloo");
    cr_assert_eq(parse_ok("  #!comm-pattern:rccl  \n", 1), 0);
    cr_expect_str_eq(list.comm_pattern, "rccl");
    parse_fails("kernels > 0\n#! comm-pattern: at::native", CP_EPARSE,
                "line 2: comm-pattern 'at::native': expected a name's prefix (letters, digits, "
                "'_'), as in 'nccl'");
    parse_fails("#! comm-pattern:", CP_EPARSE,
                "line 1: comm-pattern '': expected a name's prefix (letters, digits, '_'), as in "
                "'nccl'");
    parse_fails("#! pattern: x", CP_EPARSE,
                "line 1: unknown directive (the one there is: '#! comm-pattern: PREFIX')");
    cr_expect_str_eq(list.comm_pattern, "rccl", "a failed text changes nothing");
    cr_assert_eq(parse_ok("# comm-pattern: x\n", 1), 0);
    cr_expect_str_eq(list.comm_pattern, "rccl", "a plain comment is no directive");
    cp_expect_list_free(&list);
    cr_expect_str_eq(list.comm_pattern, "");
}

/* Every output shows a metric through cp_metric_format: a share as a
 * fraction and a percentage, never "0 ratio"; a count whose unit agrees
 * with it, never "1 kernels". */
Test(expect, metric_values_are_shown_in_words_that_agree)
{
    const struct {
        const char *metric;
        double v;
        const char *shown;
    } cases[] = {
        {"copy_kernel_overlap_ratio", 0, "0 (0%)"},
        {"copy_kernel_overlap_ratio", 0.823457, "0.823457 (82.3%)"},
        {"kernels", 1, "1 kernel"},
        {"kernels", 200, "200 kernels"},
        {"copies", 1, "1 copy"},
        {"gaps_over_threshold", 1, "1 gap"},
        {"span_ns", 1234567, "1234567 ns"},
        {"mean_concurrent_kernels", 1, "1 kernel"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        cp_metric_format(cp_metric_find(cases[i].metric), cases[i].v, out, sizeof out);
        cr_expect_str_eq(out, cases[i].shown, "%s", cases[i].metric);
    }
}

/* 55 bad lines, more than the message has room for: the first ones in
 * full, each with its line and column, then the true count of the rest
 * (it once printed no line and "(and 1 more errors)": the inner list of
 * syntax errors did not fit the outer list whole, and was dropped as one). */
Test(expect, errors_past_the_room_are_counted_never_lost)
{
    char text[55 * 24] = "";
    for (int i = 1; i <= 55; i++) {
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "kernels >> %d\n", i);
    }
    cp_expect_list l = {0};
    cr_expect_eq(cp_expect_parse_all(text, 1, &l), CP_EPARSE);
    const char *e = cp_last_error();
    cr_expect(strncmp(e, "line 1, column 9: expected an operator", 38) == 0, "%s", e);
    int shown = 0, more = 0;
    for (const char *p = e; (p = strstr(p, "column 9: expected an operator")); p++)
        shown++;
    const char *tail = strstr(e, "(and ");
    cr_assert_not_null(tail, "%s", e);
    cr_expect_eq(sscanf(tail, "(and %d more errors)", &more), 1, "%s", tail);
    cr_expect_gt(shown, 40, "%d shown", shown);
    cr_expect_eq(shown + more, 55, "%d shown and %d more", shown, more);
    cp_expect_list_free(&l);
}

/* One list inside another: the inner's lines each count, its "(and N
 * more errors)" adds N to the outer's, and one error past the room is
 * "(and 1 more error)". */
Test(expect, nested_error_lists_count_every_error)
{
    cp_errors inner = {0}, outer = {0};
    char line[200];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    for (int i = 0; i < 30; i++)
        cp_errors_add(&inner, cp_failf(CP_EINVAL, "inner %02d %s", i, line));
    cr_expect_eq(cp_errors_finish(&inner), CP_EINVAL);
    cp_errors_add(&outer, CP_EPARSE);
    cp_errors_add(&outer, cp_failf(CP_EINVAL, "one more, past the room"));
    cr_expect_eq(cp_errors_finish(&outer), CP_EPARSE);
    const char *e = cp_last_error();
    int shown = 0, more = 0;
    for (const char *p = e; (p = strstr(p, "inner ")); p++)
        shown++;
    cr_assert_not_null(strstr(e, "(and "), "%s", e);
    cr_expect_eq(sscanf(strstr(e, "(and "), "(and %d more errors)", &more), 1, "%s", e);
    int last = strstr(e, "one more, past the room") != NULL;
    cr_expect_eq(shown + last + more, 31, "%d shown, %d and %d more", shown, last, more);
    /* One error past the room: singular. */
    cp_errors one = {0};
    char big[3990];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cp_errors_add(&one, cp_failf(CP_EINVAL, "%s", big));
    cp_errors_add(&one, cp_failf(CP_EINVAL, "%s", line));
    cp_errors_finish(&one);
    cr_expect_not_null(strstr(cp_last_error(), "\n  (and 1 more error)"), "%.80s",
                       cp_last_error() + strlen(big) - 10);
}

/* What an expectation file is not, said before its errors: a file with a
 * NUL byte is not text; three lines or more of which none parses (a
 * Python script given by mistake) are named as no expectation file, with
 * their errors after; one good line among bad ones is a file with errors,
 * said as before. */
Test(expect, a_file_that_is_no_expectation_file_says_so)
{
    cp_expect_list l = {0};
    const char bin[] = "kern\0els > 1\n";
    cr_expect_eq(cp_expect_parse_file(bin, sizeof bin - 1, &l), CP_EPARSE);
    cr_expect_not_null(strstr(cp_last_error(), "not a text file (a NUL byte at byte 4)"), "%s",
                       cp_last_error());
    const char *py = "import torch\nx = torch.zeros(3)\n\n# a comment\nprint(x)\n";
    cr_expect_eq(cp_expect_parse_file(py, strlen(py), &l), CP_EPARSE);
    const char *e = cp_last_error();
    cr_expect(strncmp(e, "none of its 3 lines is an expectation: is it an expectation file?",
                      65) == 0,
              "%s", e);
    cr_expect_not_null(strstr(e, "line 5, column 9"), "the errors follow, with their own lines: %s",
                       e);
    const char *one_good = "kernels > 1\nkernels >> 2\nkernels >> 3\n";
    cr_expect_eq(cp_expect_parse_file(one_good, strlen(one_good), &l), CP_EPARSE);
    cr_expect_null(strstr(cp_last_error(), "is it an expectation file"), "%s", cp_last_error());
    cr_expect_not_null(strstr(cp_last_error(), "line 2, column 9"), "%s", cp_last_error());
    cr_expect_eq(l.n, 0);
    const char *good = "kernels > 1\n";
    cr_expect_eq(cp_expect_parse_file(good, strlen(good), &l), 0);
    cr_expect_eq(l.n, 1);
    cp_expect_list_free(&l);
}

/* Metric and finding names are matched whatever their case (every name
 * is lower case): the line keeps its text, the name is the metric's; a
 * misspelt one in capitals is still answered with the name meant. */
Test(expect, names_in_capitals_are_the_metrics_and_findings)
{
    cp_expect_list l = {0};
    cr_assert_eq(cp_expect_parse_all("PEAK_Concurrent_Kernels > 1\nfinding CUDA_MEMCPY_ASYNC\n", 1,
                                     &l),
                 0, "%s", cp_last_error());
    cr_assert_eq(l.n, 2);
    cr_expect_str_eq(l.items[0].name, "peak_concurrent_kernels");
    cr_expect_str_eq(l.items[0].text, "PEAK_Concurrent_Kernels > 1");
    cr_expect_str_eq(l.items[1].name, "cuda_memcpy_async");
    cr_expect_eq(cp_expect_validate_name(&l.items[0]), 0, "%s", cp_last_error());
    cr_expect_eq(cp_expect_validate_name(&l.items[1]), 0, "%s", cp_last_error());
    cp_expect_list_free(&l);
    cr_assert_eq(cp_expect_parse_all("KERNELZ > 1\n", 1, &l), 0);
    cr_expect_eq(cp_expect_validate_name(&l.items[0]), CP_EINVAL);
    cr_expect_not_null(strstr(cp_last_error(), "(did you mean 'kernels'?)"), "%s",
                       cp_last_error());
    cp_expect_list_free(&l);
}

/* A text with a syntax error and two misspelt names says all three at
 * once, each with its line and column and the name meant; the list is
 * left as it was. */
Test(expect, a_syntax_error_does_not_hide_the_other_lines_errors)
{
    cp_expect_list l = {0};
    const char *text = "peak_concurent_kernels > 1\n"
                       "copy_kernel_overlap_ratio >> 0.3\n"
                       "# a comment\n"
                       "no finding cuda_memcpy_asink\n"
                       "kernels > 1\n";
    cr_expect_eq(cp_expect_parse_all(text, 1, &l), CP_EPARSE);
    cr_expect_eq(l.n, 0);
    const char *e = cp_last_error();
    cr_expect_not_null(strstr(e, "line 2, column 27: expected an operator"), "%s", e);
    cr_expect_not_null(strstr(e, "line 1, column 1: unknown metric 'peak_concurent_kernels' (did "
                                 "you mean 'peak_concurrent_kernels'?)"),
                       "%s", e);
    cr_expect_not_null(strstr(e, "line 4, column 12: unknown finding 'cuda_memcpy_asink'"), "%s",
                       e);
    cr_expect_null(strstr(e, "line 5"), "%s", e);
    /* A good text parses as cp_expect_parse does. */
    cr_expect_eq(cp_expect_parse_all("kernels > 1\n", 1, &l), 0);
    cr_expect_eq(l.n, 1);
    cp_expect_list_free(&l);
}
