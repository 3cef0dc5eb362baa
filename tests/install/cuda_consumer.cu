// A CUDA program profiled with an installed gpuprof, built the way the README says:
//   nvcc -o cuda_consumer cuda_consumer.cu $(pkg-config --cflags --libs gpuprof)
// A host range around the launches and a CUDA-event timer around the kernel; without a GPU it
// says so and still records the host range (scripts/check-install builds and runs it).
#include <cstdio>

#include <cuda_runtime.h>

#include "gpuprof/profiler.h"

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

int main()
{
    gp_profiler *p = gp_profiler_global();
    const int n = 1 << 20;
    float *x = nullptr;
    gp_range_begin(p, "step", NULL);
    bool gpu = cudaMalloc(&x, n * sizeof(float)) == cudaSuccess;
    if (gpu) {
        gp_cuda_timer *t = gp_profiler_cuda_timer(p);
        gp_status st = gp_cuda_timer_start(t, "scale", nullptr);
        scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
        if (st == GP_OK)
            st = gp_cuda_timer_stop(t, "scale");
        cudaDeviceSynchronize();
        cudaFree(x);
        if (gp_cuda_timer_print(t, stdout) != GP_OK || st != GP_OK)
            return 1;
    }
    gp_range_end(p);
    gp_profiler_flush(p);
    gp_profiler_stats s;
    gp_profiler_get_stats(p, &s);
    std::printf("cuda_consumer: %s; %llu range(s) recorded\n",
                gpu ? "kernel timed" : "no GPU (host range only)", (unsigned long long)s.ranges);
    return s.ranges >= 1 ? 0 : 1;
}
