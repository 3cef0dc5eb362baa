// streams: S streams, each doing pinned async copy in, a memset, a kernel and a copy out, K times,
// then a stream synchronisation. Usage: streams [streams=4] [iterations=10]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void scale(float *x, float f, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = x[i] * f + 1.0f;
}

int main(int argc, char **argv)
{
    int ns = argc > 1 ? std::atoi(argv[1]) : 4;
    int iters = argc > 2 ? std::atoi(argv[2]) : 10;
    if (ns < 1 || ns > 64)
        return 2;
    const int n = 1 << 18;
    size_t bytes = n * sizeof(float);
    cudaStream_t st[64];
    float *host[64], *dev[64];
    for (int s = 0; s < ns; s++) {
        CHECK(cudaStreamCreate(&st[s]));
        CHECK(cudaMallocHost(&host[s], bytes));
        CHECK(cudaMalloc(&dev[s], bytes));
        for (int i = 0; i < n; i++)
            host[s][i] = 1.0f;
    }
    for (int k = 0; k < iters; k++)
        for (int s = 0; s < ns; s++) {
            CHECK(cudaMemcpyAsync(dev[s], host[s], bytes, cudaMemcpyHostToDevice, st[s]));
            CHECK(cudaMemsetAsync(dev[s], 0, 64, st[s]));
            scale<<<128, 256, 0, st[s]>>>(dev[s], 2.0f, n);
            CHECK(cudaMemcpyAsync(host[s], dev[s], bytes, cudaMemcpyDeviceToHost, st[s]));
        }
    for (int s = 0; s < ns; s++)
        CHECK(cudaStreamSynchronize(st[s]));
    CHECK(cudaGetLastError());
    for (int s = 0; s < ns; s++) {
        CHECK(cudaFree(dev[s]));
        CHECK(cudaFreeHost(host[s]));
        CHECK(cudaStreamDestroy(st[s]));
    }
    std::printf("streams: %d streams x %d iterations OK\n", ns, iters);
    return 0;
}
