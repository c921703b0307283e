/*
 * A traced process's rank, local rank, world size and exec run, read
 * from the launcher's environment (docs/distributed.md). Kept apart
 * from the injection library, which calls it once per process, so that
 * the CPU tests can hand it any environment.
 */
#ifndef CUPROOF_COLLECT_RANK_H
#define CUPROOF_COLLECT_RANK_H

#include <cuproof/trace.h>

/* The variable `cuproof exec` sets to its run's id. */
#define CP_EXEC_RUN_VAR "CUPROOF_EXEC_RUN"

/*
 * Sets p's rank, local_rank, world_size (-1 when unknown), rank_var,
 * rank_why and run from `env` (NAME=value strings ending in NULL, as
 * `environ`; NULL is an empty environment). Each figure comes from the
 * first of its variables that is set:
 *   rank:       RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK
 *   local rank: LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID
 *   world size: WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE
 * A value that is not a decimal integer (0 .. 2^31-1 for ranks, 1 ..
 * 2^31-1 for a size; blanks around it allowed) leaves its figure unknown
 * and says why in rank_why; later variables are not tried, since they may
 * be another launcher's left in the environment. A rank not below the
 * world size is kept, and rank_why says so.
 */
void cp_rank_from_env(char *const *env, cp_process *p);

/* Test only (docs/exec.md "Simulating hosts"): the variable that makes one
 * rank write another host's name and a clock that many ns off, so that one
 * machine of two GPUs simulates two hosts whose clocks disagree. */
#define CP_TEST_HOST_SHIFT_VAR "CUPROOF_TEST_HOST_SHIFT"

/* The host name a shifted rank writes at most (cp_process.host's size). */
#define CP_HOST_SHIFT_NAME_MAX 63

/*
 * Parses `value`, CUPROOF_TEST_HOST_SHIFT's "RANK:HOST:OFFSET_NS" entries
 * separated by commas (RANK a decimal integer from 0, HOST 1 to 63
 * characters other than ':', ',' and blanks, OFFSET_NS a decimal integer
 * with an optional sign, |OFFSET_NS| <= 10^15 ns), and finds the entry of
 * rank `rank` (-1: this process has none, so no entry applies).
 * Returns 1 with its host in host[CP_HOST_SHIFT_NAME_MAX + 1] and its
 * offset in *offset_ns; 0 when value is NULL or empty or no entry is this
 * rank's; -1 for a malformed value or a rank given twice, with why[]
 * naming the variable, the character position (from 1) and what was
 * expected there; nothing is then applied, whichever rank it was for.
 * Pure: no allocation, no output, so that the injection library may call
 * it inside cuInit and the CPU tests can hand it anything.
 */
int cp_host_shift_parse(const char *value, int32_t rank, char *host, int64_t *offset_ns,
                        char *why, size_t why_len);

#endif
