// vector_add: copies two vectors to the GPU, adds them with a kernel launched N times, copies the
// result back and checks it. Usage: vector_add [launches=100] [elements=1048576]
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

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? std::atoi(argv[1]) : 100;
    int n = argc > 2 ? std::atoi(argv[2]) : 1 << 20;
    size_t bytes = (size_t)n * sizeof(float);
    float *ha = (float *)std::malloc(bytes), *hb = (float *)std::malloc(bytes);
    float *hc = (float *)std::malloc(bytes);
    if (!ha || !hb || !hc)
        return 1;
    for (int i = 0; i < n; i++) {
        ha[i] = (float)i;
        hb[i] = 2.0f * (float)i;
    }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
    int block = 256, grid = (n + block - 1) / block;
    for (int l = 0; l < launches; l++)
        vector_add<<<grid, block>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (hc[i] != 3.0f * (float)i) {
            std::fprintf(stderr, "vector_add: wrong result at %d\n", i);
            return 1;
        }
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    std::free(ha);
    std::free(hb);
    std::free(hc);
    std::printf("vector_add: %d launches on %d elements OK\n", launches, n);
    return 0;
}
