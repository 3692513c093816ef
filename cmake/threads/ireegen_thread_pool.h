// A small pthreads pool for runtimeless models built with NAME_PARALLEL_FOR
// (docs/runtimeless.md#threads): ireegen_thread_pool_parallel_for() is a
// NAME_parallel_for_fn.  For desktop and server builds; bare-metal firmware
// supplies its own parallel-for, or none.
#ifndef IREEGEN_THREAD_POOL_H_
#define IREEGEN_THREAD_POOL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef struct ireegen_thread_pool_t ireegen_thread_pool_t;

// One call of a parallel-for: |index| from 0 to the count.
typedef void (*ireegen_thread_pool_body_fn)(void* arg, uint32_t index);

// Starts a pool of |thread_count| threads (0: one per online CPU): the caller
// of ireegen_thread_pool_parallel_for() and thread_count - 1 workers, which
// sleep between calls.  Returns 0, or the errno of the failure.
int ireegen_thread_pool_create(uint32_t thread_count,
                               ireegen_thread_pool_t** out_pool);

// Stops and joins the workers and frees |pool| (NULL is allowed).
void ireegen_thread_pool_destroy(ireegen_thread_pool_t* pool);

// The number of threads a parallel-for runs on, the caller included.
uint32_t ireegen_thread_pool_thread_count(const ireegen_thread_pool_t* pool);

// Calls body(arg, i) once for every i below |count|, spread over the pool's
// threads, and returns when every call has returned.  |pool| is an
// ireegen_thread_pool_t*.  Calls from several threads take turns.
void ireegen_thread_pool_parallel_for(void* pool, uint32_t count,
                                      ireegen_thread_pool_body_fn body,
                                      void* arg);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  // IREEGEN_THREAD_POOL_H_
