/*
 * A traced process's rank, local rank, world size and exec run, read
 * from the launcher's environment (docs/DESIGN.md "Ranks"). Kept apart
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

#endif
