/* jansson's part of bench_json_libs (its names clash with json-c's). */
#include <jansson.h>

long run_jansson(const char *data, size_t len);

long run_jansson(const char *data, size_t len)
{
    json_error_t e;
    json_t *root = json_loadb(data, len, 0, &e);
    if (!root)
        return -1;
    long n = (long)json_array_size(json_object_get(root, "traceEvents"));
    json_decref(root);
    return n;
}
