/* Internal helpers of the injection library shared with its tests. Not installed. */
#ifndef GP_TRACER_INTERNAL_H
#define GP_TRACER_INTERNAL_H

#include <stdint.h>

#include "gpuprof/trace.h"
#include "produce/tracer/cupti_api.h"

/* The process's rank from the usual launcher variables, first found of RANK, OMPI_COMM_WORLD_RANK,
 * SLURM_PROCID, PMI_RANK; -1 when none is set or the value is not a non-negative integer. */
int32_t gp__tracer_env_rank(void);
/* World size from WORLD_SIZE, OMPI_COMM_WORLD_SIZE, SLURM_NTASKS, PMI_SIZE; -1 when unknown. */
int32_t gp__tracer_env_world_size(void);

/* Fills the trace's identity: rank and world size into distributedInfo (present only when a rank
 * variable is set), and metadata: producer, clock, pid, CUPTI version (api may be NULL). Metadata
 * that cannot be stored (out of memory) is left out. */
void gp__tracer_fill_identity(gp_trace *t, const gp__cupti *api);

#endif
