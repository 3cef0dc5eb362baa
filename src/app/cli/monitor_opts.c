/* Monitor-configuration options shared by `gpuprof monitor` and `gpuprof exporter`. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"

int gp__cli_monitor_option(const char *cmd, gp__cli_monitor_cfg *mc, int id, char *value)
{
    static const char *const names[] = {"level", "mode"};
    if (id != GP__CLI_ID_CONFIG && id != GP__CLI_ID_SET && id != GP__CLI_ID_LEVEL &&
        id != GP__CLI_ID_MODE)
        return -1;
    if (id == GP__CLI_ID_CONFIG) {
        mc->path = value;
        return 0;
    }
    if (mc->n_sets == GP_ARRAY_LEN(mc->sets)) {
        gp__cli_error(cmd, "more than %zu configuration settings", GP_ARRAY_LEN(mc->sets));
        return 2;
    }
    if (id == GP__CLI_ID_SET) {
        char *eq = strchr(value, '=');
        if (!eq) {
            gp__cli_error(cmd, "--set '%s': expected KEY=VALUE", value);
            return 2;
        }
        *eq = '\0';
        mc->sets[mc->n_sets][0] = value;
        mc->sets[mc->n_sets][1] = eq + 1;
    } else {
        mc->sets[mc->n_sets][0] = names[id == GP__CLI_ID_MODE];
        mc->sets[mc->n_sets][1] = value;
    }
    mc->n_sets++;
    return 0;
}

/* A configuration warning on stderr: "gpuprof <cmd>: warning: <msg>". */
static void warn_config(const char *msg, void *ctx)
{
    fprintf(stderr, "gpuprof %s: warning: %s\n", (const char *)ctx, msg);
}

bool gp__cli_monitor_apply(const char *cmd, const gp__cli_monitor_cfg *mc, gp_monitor_config *cfg)
{
    gp_error err = {0};
    void *ctx = (void *)(uintptr_t)cmd;
    if (mc->path && gp_monitor_config_load(cfg, mc->path,
                                           &(gp_config_opts){.warn = warn_config, .warn_ctx = ctx},
                                           &err) != GP_OK) {
        gp__cli_error(cmd, "%s", err.msg);
        return false;
    }
    for (size_t i = 0; i < mc->n_sets; i++)
        if (gp_monitor_config_set(cfg, mc->sets[i][0], mc->sets[i][1],
                                  &(gp_config_opts){.warn = warn_config, .warn_ctx = ctx},
                                  &err) != GP_OK) {
            gp__cli_error(cmd, "%s", err.msg);
            return false;
        }
    return true;
}
