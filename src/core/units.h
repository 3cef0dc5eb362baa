/* Units, decided once for all of gpuprof (docs/internals/core.md, "Units"):
 *
 * - Sizes of memory and files are binary and say so: KiB, MiB, GiB (2^10, 2^20, 2^30 bytes), as
 *   nvidia-smi and PyTorch's memory tables show them. Nothing writes "MB" for 2^20 bytes.
 * - Rates are decimal: GB/s is 10^9 bytes per second, as bandwidth is quoted by vendors and HTA.
 * - Durations are ns in data (JSON, CSV) and scaled for people in text: s, ms, us, ns.
 *
 * Text that shows a size goes through gp__fmt_bytes or divides by GP_MIB and labels it MiB. */
#ifndef GP_CORE_UNITS_H
#define GP_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define GP_KIB 1024.0
#define GP_MIB (1024.0 * 1024.0)
#define GP_GIB (1024.0 * 1024.0 * 1024.0)
#define GP_GB_PER_S 1e9 /* bytes per second in one GB/s */

/* "1.234 ms", "12.300 us", "3.450 s", "870 ns" into buf (always NUL-terminated). */
void gp__fmt_dur(char *buf, size_t cap, int64_t ns);

/* "1.50 GiB", "512.00 KiB", "12 B" into buf (always NUL-terminated). */
void gp__fmt_bytes(char *buf, size_t cap, double bytes);

#endif
