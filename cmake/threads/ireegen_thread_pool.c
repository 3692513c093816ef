// The pthreads pool of ireegen_thread_pool.h.  A parallel-for hands out the
// indices through one atomic counter; the workers wait on a condition
// variable between calls, and the caller waits until every worker is done
// with the call before it returns.
#define _POSIX_C_SOURCE 200809L  // sysconf(_SC_NPROCESSORS_ONLN)

#include "ireegen_thread_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct ireegen_thread_pool_t {
  pthread_mutex_t call;   // one parallel-for at a time
  pthread_mutex_t mutex;  // guards the fields below up to `next`
  pthread_cond_t start;   // a new call, or stop
  pthread_cond_t done;    // busy reached 0
  uint64_t generation;    // counts the calls; workers wait for a change
  int stop;
  uint32_t busy;  // workers not yet done with the current call
  ireegen_thread_pool_body_fn body;
  void* arg;
  uint32_t count;
  atomic_ullong next;  // the next index to hand out
  uint32_t worker_count;
  pthread_t workers[];
};

// Runs indices of the current call until none is left.
static void ireegen_thread_pool_run(ireegen_thread_pool_t* pool) {
  for (;;) {
    unsigned long long index = atomic_fetch_add(&pool->next, 1);
    if (index >= pool->count) return;
    pool->body(pool->arg, (uint32_t)index);
  }
}

static void* ireegen_thread_pool_worker(void* arg) {
  ireegen_thread_pool_t* pool = arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->mutex);
  for (;;) {
    while (!pool->stop && pool->generation == seen) {
      pthread_cond_wait(&pool->start, &pool->mutex);
    }
    if (pool->stop) break;
    seen = pool->generation;
    pthread_mutex_unlock(&pool->mutex);
    ireegen_thread_pool_run(pool);
    pthread_mutex_lock(&pool->mutex);
    if (--pool->busy == 0) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->mutex);
  return NULL;
}

// Stops and joins the first |started| workers.
static void ireegen_thread_pool_stop(ireegen_thread_pool_t* pool,
                                     uint32_t started) {
  pthread_mutex_lock(&pool->mutex);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->mutex);
  for (uint32_t i = 0; i < started; ++i) {
    pthread_join(pool->workers[i], NULL);
  }
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->start);
  pthread_mutex_destroy(&pool->mutex);
  pthread_mutex_destroy(&pool->call);
  free(pool);
}

int ireegen_thread_pool_create(uint32_t thread_count,
                               ireegen_thread_pool_t** out_pool) {
  if (!out_pool) return EINVAL;
  *out_pool = NULL;
  if (thread_count == 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    thread_count = online > 0 ? (uint32_t)online : 1;
  }
  uint32_t worker_count = thread_count - 1;
  ireegen_thread_pool_t* pool =
      calloc(1, sizeof(*pool) + worker_count * sizeof(pthread_t));
  if (!pool) return ENOMEM;
  pthread_mutex_init(&pool->call, NULL);
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->start, NULL);
  pthread_cond_init(&pool->done, NULL);
  atomic_init(&pool->next, 0);
  for (uint32_t i = 0; i < worker_count; ++i) {
    int error = pthread_create(&pool->workers[i], NULL,
                               ireegen_thread_pool_worker, pool);
    if (error) {
      ireegen_thread_pool_stop(pool, i);
      return error;
    }
  }
  pool->worker_count = worker_count;
  *out_pool = pool;
  return 0;
}

void ireegen_thread_pool_destroy(ireegen_thread_pool_t* pool) {
  if (pool) ireegen_thread_pool_stop(pool, pool->worker_count);
}

uint32_t ireegen_thread_pool_thread_count(const ireegen_thread_pool_t* pool) {
  return pool->worker_count + 1;
}

void ireegen_thread_pool_parallel_for(void* context, uint32_t count,
                                      ireegen_thread_pool_body_fn body,
                                      void* arg) {
  ireegen_thread_pool_t* pool = context;
  if (pool->worker_count == 0 || count < 2) {
    for (uint32_t i = 0; i < count; ++i) body(arg, i);
    return;
  }
  pthread_mutex_lock(&pool->call);
  pthread_mutex_lock(&pool->mutex);
  pool->body = body;
  pool->arg = arg;
  pool->count = count;
  atomic_store(&pool->next, 0);
  pool->busy = pool->worker_count;
  ++pool->generation;
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->mutex);
  ireegen_thread_pool_run(pool);
  pthread_mutex_lock(&pool->mutex);
  while (pool->busy != 0) pthread_cond_wait(&pool->done, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
  pthread_mutex_unlock(&pool->call);
}
