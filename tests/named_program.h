/*
 * The recorded three-process program of tests/fixtures/exec/program (each
 * process ran work on stream 13 of context 1: pids 4242 and 4250 on
 * device 0, 4251 on device 1), with stream names as CUPTI's NAME records
 * would give them: 4242 names its stream 13 'copy "in" <&>' (quotes and
 * markup, for every output's escaping), 4251 names a stream 13 of device
 * 0, where it ran nothing ("not on GPU 1"). The outputs' tests hold that
 * the one name labels 4242's stream alone.
 */
#ifndef CUPROOF_TESTS_NAMED_PROGRAM_H
#define CUPROOF_TESTS_NAMED_PROGRAM_H

#include <cuproof/error.h>
#include <cuproof/trace.h>
#include <cuproof/internal/proc.h>

#include <criterion/criterion.h>

#define NAMED_PROGRAM_NAME "copy \"in\" <&>"

static inline void named_program_read(cp_trace *t)
{
    cp_trace_init(t);
    size_t nfiles = 0;
    cr_assert_eq(cp_proc_read_dir(CUPROOF_FIXTURES "/exec/program", t, &nfiles), 0, "%s",
                 cp_last_error());
    cr_assert_eq(t->nprocesses, 3);
    cr_assert_eq(cp_trace_name_stream(t, &(cp_stream_name){0, 0, 1, 13, NAMED_PROGRAM_NAME}), 0);
    cr_assert_eq(cp_trace_name_stream(t, &(cp_stream_name){2, 0, 1, 13, "not on GPU 1"}), 0);
}

#endif
