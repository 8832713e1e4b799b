/* Names of schedules, syncs and presets as they appear on the command line and in records. */
#include "sb_internal.h"

#include <string.h>

/* A schedule added to harness.h without a name here fails the _Static_assert below. */
static const char *const schedule_names[SB_SCHED_COUNT] = {
    [SB_SCHED_NONE] = "none",     [SB_SCHED_STATIC] = "static", [SB_SCHED_DYNAMIC] = "dynamic",
    [SB_SCHED_GUIDED] = "guided", [SB_SCHED_BLOCK] = "block",   [SB_SCHED_CYCLIC] = "cyclic",
    [SB_SCHED_QUEUE] = "queue",   [SB_SCHED_MASTER] = "master"};
_Static_assert(SB_SCHED_MASTER + 1 == SB_SCHED_COUNT, "name every schedule in schedule_names");
static const char *const sync_names[SB_SYNC_COUNT] = {"none",   "coarse",    "fine",
                                                      "atomic", "reduction", "critical"};

const char *sb_schedule_name(int32_t schedule) {
    return schedule >= 0 && schedule < SB_SCHED_COUNT ? schedule_names[schedule] : "?";
}

const char *sb_sync_name(int32_t sync) {
    return sync >= 0 && sync < SB_SYNC_COUNT ? sync_names[sync] : "?";
}

const char *sb_preset_name(int32_t preset) {
    switch (preset) {
    case SB_PRESET_SYMMETRIC:
        return "symmetric";
    case SB_PRESET_ASYMMETRIC:
        return "asymmetric";
    default:
        return "custom";
    }
}

int32_t sb_schedule_from_name(const char *name) {
    for (int32_t i = 0; i < SB_SCHED_COUNT; i++)
        if (strcmp(name, schedule_names[i]) == 0)
            return i;
    return -1;
}

int32_t sb_sync_from_name(const char *name) {
    for (int32_t i = 0; i < SB_SYNC_COUNT; i++)
        if (strcmp(name, sync_names[i]) == 0)
            return i;
    return -1;
}
