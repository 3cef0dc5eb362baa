/* gpuprof monitor: placeholder until its module lands; says so plainly and exits 2. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int gp__cmd_monitor(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: gpuprof monitor ...\n\nThis command is not part of this build yet.\n");
        return 0;
    }
    gp__cli_error("monitor", "not available in this build yet");
    return 2;
}
