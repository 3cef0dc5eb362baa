/* Mutexes the compiler can check: clang's -Wthread-safety analysis over a thin wrapper of
 * pthread_mutex_t.
 *
 * Every lock of gpuprof is a gp__mutex. Data a lock protects is declared GP_GUARDED_BY(lock) (or
 * GP_PT_GUARDED_BY for what a pointer points to); a function that expects the caller to hold a
 * lock says GP_REQUIRES(lock); one that takes it says GP_ACQUIRE / GP_RELEASE. clang builds with
 * -Wthread-safety (CMakeLists.txt; CI builds the fuzz targets with clang and -Werror) and reports
 * any access to guarded data without its lock. With gcc the annotations expand to nothing.
 *
 * The wrappers abort on a pthread error (EINVAL, EDEADLK, EPERM): each is a programming error,
 * never a runtime condition, for the default mutex type used here. */
#ifndef GP_CORE_LOCK_H
#define GP_CORE_LOCK_H

#include <pthread.h>
#include <stdlib.h>

#if defined(__clang__)
#define GP__TSA(x) __attribute__((x))
#else
#define GP__TSA(x)
#endif

#define GP_CAPABILITY(name) GP__TSA(capability(name))
#define GP_GUARDED_BY(lock) GP__TSA(guarded_by(lock))
#define GP_PT_GUARDED_BY(lock) GP__TSA(pt_guarded_by(lock))
#define GP_REQUIRES(...) GP__TSA(requires_capability(__VA_ARGS__))
#define GP_ACQUIRE(...) GP__TSA(acquire_capability(__VA_ARGS__))
#define GP_RELEASE(...) GP__TSA(release_capability(__VA_ARGS__))
#define GP_TRY_ACQUIRE(...) GP__TSA(try_acquire_capability(__VA_ARGS__))
#define GP_EXCLUDES(...) GP__TSA(locks_excluded(__VA_ARGS__))
#define GP_NO_THREAD_SAFETY_ANALYSIS GP__TSA(no_thread_safety_analysis)

typedef struct GP_CAPABILITY("mutex") gp__mutex {
    pthread_mutex_t m;
} gp__mutex;

/* Static initializer: `gp__mutex lock = GP_MUTEX_INIT;` */
#define GP_MUTEX_INIT                                                                              \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER                                                                  \
    }

static inline void gp__mutex_init(gp__mutex *mu)
{
    if (pthread_mutex_init(&mu->m, NULL) != 0)
        abort();
}

static inline void gp__mutex_destroy(gp__mutex *mu)
{
    pthread_mutex_destroy(&mu->m);
}

static inline void gp__mutex_lock(gp__mutex *mu) GP_ACQUIRE(mu) GP_NO_THREAD_SAFETY_ANALYSIS
{
    if (pthread_mutex_lock(&mu->m) != 0)
        abort();
}

static inline void gp__mutex_unlock(gp__mutex *mu) GP_RELEASE(mu) GP_NO_THREAD_SAFETY_ANALYSIS
{
    if (pthread_mutex_unlock(&mu->m) != 0)
        abort();
}

/* Waits on cond with mu held (released while waiting, held again on return). */
static inline int gp__cond_wait(pthread_cond_t *cond, gp__mutex *mu) GP_REQUIRES(mu)
{
    return pthread_cond_wait(cond, &mu->m);
}

static inline int gp__cond_timedwait(pthread_cond_t *cond, gp__mutex *mu,
                                     const struct timespec *abstime) GP_REQUIRES(mu)
{
    return pthread_cond_timedwait(cond, &mu->m, abstime);
}

#endif
