/* A stand-in for a CUDA program, for testing `gpuprof trace` without a GPU: it does what the CUDA
 * driver does with CUDA_INJECTION64_PATH (dlopen the library, call InitializeInjection), then makes
 * the fake libcupti (GP_CUPTI_LIBRARY) deliver the activity of a scenario file, then ends as asked.
 *
 *   fake_cuda_app SCENARIO MODE
 *   MODE: exit:N (exit code N) | term (SIGTERM to itself) | abort | nocuda (never touches CUDA)
 *         | fork:N (runs N copies of itself with RANK=0..N-1 and exits 0; the parent uses no CUDA)
 * It writes "fake_cuda_app: program output" to its standard output (to test where that goes).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fake_cuda_app SCENARIO MODE\n");
        return 2;
    }
    const char *mode = argv[2];
    printf("fake_cuda_app: program output\n");
    fflush(stdout);
    if (strcmp(mode, "nocuda") == 0)
        return 0;
    if (strncmp(mode, "fork:", 5) == 0) {
        int n = atoi(mode + 5);
        for (int i = 0; i < n; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                char rank[16];
                snprintf(rank, sizeof rank, "%d", i);
                setenv("RANK", rank, 1);
                execl(argv[0], argv[0], argv[1], "exit:0", (char *)NULL);
                _exit(127);
            }
        }
        int status, bad = 0;
        while (wait(&status) > 0)
            bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        return bad;
    }
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    const char *cupti = getenv("GP_CUPTI_LIBRARY");
    void *h = inj ? dlopen(inj, RTLD_NOW) : NULL;
    int (*init)(void) = NULL;
    if (h)
        *(void **)&init = dlsym(h, "InitializeInjection");
    if (!init || init() != 1) {
        fprintf(stderr, "fake_cuda_app: injection failed: %s\n", dlerror());
        return 90;
    }
    void *f = cupti ? dlopen(cupti, RTLD_NOW) : NULL;
    int (*run)(const char *) = NULL;
    if (f)
        *(void **)&run = dlsym(f, "fake_cupti_run");
    char *scenario = slurp(argv[1]);
    if (!run || !scenario || run(scenario) < 0) {
        fprintf(stderr, "fake_cuda_app: cannot run scenario %s\n", argv[1]);
        return 91;
    }
    free(scenario);
    if (strncmp(mode, "exit:", 5) == 0)
        return atoi(mode + 5);
    if (strcmp(mode, "term") == 0) {
        raise(SIGTERM);
        for (;;)
            pause();
    }
    if (strcmp(mode, "abort") == 0)
        abort();
    return 92;
}
