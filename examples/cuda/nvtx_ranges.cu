// nvtx_ranges: NVTX ranges around phases (nested), a mark, kernels inside each phase.
// Usage: nvtx_ranges [steps=5]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void work(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * 0.5f + 1.0f;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? std::atoi(argv[1]) : 5;
    const int n = 1 << 20;
    float *x;
    if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess)
        return 1;
    nvtxRangePushA("train");
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("step");
        nvtxRangePushA("forward");
        work<<<(n + 255) / 256, 256>>>(x, n);
        nvtxRangePop();
        nvtxRangePushA("backward");
        work<<<(n + 255) / 256, 256>>>(x, n);
        work<<<(n + 255) / 256, 256>>>(x, n);
        nvtxRangePop();
        cudaDeviceSynchronize();
        nvtxRangePop();
    }
    nvtxMarkA("done");
    nvtxRangePop();
    cudaFree(x);
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    std::printf("nvtx_ranges: %d steps OK\n", steps);
    return 0;
}
