/* Monitor-configuration options shared by `gpuprof monitor` and `gpuprof exporter`. */
#include <string.h>

#include "app/cli/cli.h"

int gp__cli_monitor_option(const char *cmd, gp__cli_monitor_cfg *mc, int argc, char **argv, int *i,
                           bool allow_mode)
{
    const char *a = argv[*i];
    bool is_level = strcmp(a, "--level") == 0, is_mode = allow_mode && strcmp(a, "--mode") == 0;
    bool is_set = strcmp(a, "--set") == 0, is_config = strcmp(a, "--config") == 0;
    if (!is_level && !is_mode && !is_set && !is_config)
        return 0;
    if (*i + 1 >= argc) {
        gp__cli_error(cmd, "%s needs a value (see --help)", a);
        return -1;
    }
    char *v = argv[++*i];
    if (is_config) {
        mc->path = v;
        return 1;
    }
    if (mc->n_sets == GP_ARRAY_LEN(mc->sets)) {
        gp__cli_error(cmd, "more than %zu configuration settings", GP_ARRAY_LEN(mc->sets));
        return -1;
    }
    if (is_set) {
        char *eq = strchr(v, '=');
        if (!eq) {
            gp__cli_error(cmd, "--set '%s': expected KEY=VALUE", v);
            return -1;
        }
        *eq = '\0';
        mc->sets[mc->n_sets][0] = v;
        mc->sets[mc->n_sets][1] = eq + 1;
    } else {
        mc->sets[mc->n_sets][0] = a + 2; /* "level" or "mode" */
        mc->sets[mc->n_sets][1] = v;
    }
    mc->n_sets++;
    return 1;
}

bool gp__cli_monitor_apply(const char *cmd, const gp__cli_monitor_cfg *mc, gp_monitor_config *cfg)
{
    gp_error err = {0};
    if (mc->path && gp_monitor_config_load(cfg, mc->path, &err) != GP_OK) {
        gp__cli_error(cmd, "%s", err.msg);
        return false;
    }
    for (size_t i = 0; i < mc->n_sets; i++)
        if (gp_monitor_config_set(cfg, mc->sets[i][0], mc->sets[i][1], &err) != GP_OK) {
            gp__cli_error(cmd, "%s", err.msg);
            return false;
        }
    return true;
}
