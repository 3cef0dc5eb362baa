/* gpuprof top's data side (app layer): what the monitor says, gathered into a gp_top_frame for the
 * renderer (render/top.h); the events the monitor delivers, kept for the events pane. */
#ifndef GP_APP_CLI_TOP_FRAME_H
#define GP_APP_CLI_TOP_FRAME_H

#include "core/lock.h"
#include "gpuprof/monitor.h"
#include "render/top.h"

#define GP__TOP_EVENTS 128 /* events kept for the pane (the newest) */
#define GP__TOP_PROCS 1024 /* process rows gathered per frame */

typedef struct gp__top_data {
    gp_monitor *mon;
    gp_host_procs *hp;
    uint64_t gpu_mask; /* bit i: NVML index i is shown (--gpus); all ones by default */
    uint32_t interval_ms;
    gp_top_gpu *gpus; /* one per shown GPU */
    size_t n_gpus;
    gp_process_row *procs;
    size_t n_procs;
    gp_gpu_sample *hist; /* GP_TOP_HISTORY samples: the scratch of gp_monitor_history */
    gp_monitor_event ev_copy[GP__TOP_EVENTS];
    gp__mutex ev_lock;
    gp_monitor_event ev_ring[GP__TOP_EVENTS]; /* guarded by ev_lock */
    size_t ev_count;                          /* events seen; guarded by ev_lock */
} gp__top_data;

/* Allocates the buffers of d for mon (already open) and registers the events listener. GP_ENOMEM;
 * on failure nothing is left to free. */
gp_status gp__top_data_init(gp__top_data *d, gp_monitor *mon, uint64_t gpu_mask,
                            uint32_t interval_ms);
void gp__top_data_free(gp__top_data *d);
/* Reads the monitor now (latest samples, history, detectors, processes with their /proc figures,
 * health, events) and points *f at the result, valid until the next call. */
void gp__top_gather(gp__top_data *d, gp_top_frame *f);
/* The interactive view until q, Ctrl-C or SIGTERM: starts the monitor's sampler, shows a frame per
 * interval and after every key, restores the terminal. 0, or 1 when the terminal or the sampler
 * cannot be set up (a line on stderr says which). */
int gp__top_loop(gp__top_data *d, bool mono);
/* Applies one key (a byte or a GP_TOP_KEY_*) to the view; f: the GPUs g cycles
 * through. False when the key asks to quit. */
bool gp__top_key(gp_top_view *v, int key, const gp_top_frame *f);

#endif
