/* cairn_pool.h: the host thread pool that runs `parallel` regions and pooled reductions.
 *
 * One fixed pool per process, started on first use, CAIRN_THREADS wide (default: the
 * hardware thread count; 1..64). A region cuts [0, n) into blocks of at least `grain`
 * indices and calls fn(ctx, begin, end, worker) once per block; `worker` is in
 * [0, cairn_pool_width()) and no two concurrent calls share one, so a caller can keep
 * per-worker state (e.g. one exact-sum accumulator each) in an array of that width.
 * cairn_pool_run returns when every block is done. Nested calls from inside a block run
 * serially on the calling worker. */
#ifndef CAIRN_POOL_H
#define CAIRN_POOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most threads a pool can have (CAIRN_THREADS above this is refused). */
#define CAIRN_POOL_MAX_WIDTH 64

typedef void (*cairn_task_fn)(void *ctx, size_t begin, size_t end, unsigned worker);

/* Width of the pool (starts it if needed). */
unsigned cairn_pool_width(void);

/* Run fn over [0, n) in blocks of at least `grain` (0 means: pick one). */
void cairn_pool_run(size_t n, size_t grain, cairn_task_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
