// cuda_graph: captures three dependent kernels from a stream into a CUDA graph, then launches the
// graph N times. Usage: cuda_graph [launches=10]
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

__global__ void stage_a(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = 1.0f;
}
__global__ void stage_b(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= 3.0f;
}
__global__ void stage_c(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] -= 1.0f;
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? std::atoi(argv[1]) : 10;
    const int n = 1 << 20;
    float *x;
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    stage_a<<<(n + 255) / 256, 256, 0, s>>>(x, n);
    stage_b<<<(n + 255) / 256, 256, 0, s>>>(x, n);
    stage_c<<<(n + 255) / 256, 256, 0, s>>>(x, n);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    for (int l = 0; l < launches; l++)
        CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaStreamSynchronize(s));
    float h = 0;
    CHECK(cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost));
    if (h != 2.0f) {
        std::fprintf(stderr, "cuda_graph: wrong result %f\n", h);
        return 1;
    }
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(x));
    std::printf("cuda_graph: %d graph launches OK\n", launches);
    return 0;
}
