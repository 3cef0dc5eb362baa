/* Scaling tests (issue 38 item 3): an input 10x larger costs at most 15x the time. The ratio is
 * measured in the same run, never an absolute time: a quadratic cost gives a ratio near 100, a
 * linear one about 10. A busy machine can push a linear ratio past 15 once, so each size is the
 * best of three runs and a ratio over 15 is measured again (three times at most) before it fails.
 *
 *   static double cost(void *ctx, size_t n) { ... return seconds; }
 *   gp_test_assert_scales("streams", cost, NULL, 4000);   // 4,000 then 40,000 */
#ifndef GP_TESTS_COMMON_SCALING_H
#define GP_TESTS_COMMON_SCALING_H

#include <stddef.h>
#include <time.h>

/* Seconds since an arbitrary start (monotonic). */
static inline double gp_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* cost(ctx, n): the seconds of the work under test on an input of size n (build the input
 * outside the timed part). */
typedef double (*gp_test_cost_fn)(void *ctx, size_t n);

static inline double gp__test_best_of_3(gp_test_cost_fn cost, void *ctx, size_t n)
{
    double best = 1e30;
    for (int i = 0; i < 3; i++) {
        double t = cost(ctx, n);
        best = t < best ? t : best;
    }
    return best;
}

/* Asserts that cost at 10 * n is at most 15 times cost at n; prints both and the ratio. The
 * small size's time is floored at 1 us so that a near-zero cost cannot fail the ratio. */
#define gp_test_assert_scales(what, cost, ctx, n)                                                  \
    do {                                                                                           \
        double gp__small = 0, gp__large = 0;                                                       \
        for (int gp__try = 0; gp__try < 3; gp__try++) {                                            \
            gp__small = gp__test_best_of_3((cost), (ctx), (n));                                    \
            gp__large = gp__test_best_of_3((cost), (ctx), 10 * (size_t)(n));                       \
            if (gp__small < 1e-6)                                                                  \
                gp__small = 1e-6;                                                                  \
            print_message("%s: %zu %.4f s, %zu %.4f s, ratio %.1f\n", (what), (size_t)(n),         \
                          gp__small, 10 * (size_t)(n), gp__large, gp__large / gp__small);          \
            if (gp__large <= 15 * gp__small)                                                       \
                break;                                                                             \
        }                                                                                          \
        assert_true(gp__large <= 15 * gp__small);                                                  \
    } while (0)

#endif
