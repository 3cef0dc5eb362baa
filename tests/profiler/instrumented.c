/* A module compiled with -finstrument-functions for test_profiler (its functions are exported
 * so that dladdr names them). */
__attribute__((noinline)) int inst_inner(int x);
int inst_outer(int n);

__attribute__((noinline)) int inst_inner(int x)
{
    return x;
}

int inst_outer(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += inst_inner(2);
    return s;
}
