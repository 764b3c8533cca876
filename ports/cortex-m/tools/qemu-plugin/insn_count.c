/* SPDX-License-Identifier: MIT */
/* QEMU TCG plugin: exact guest instruction counts between marker calls chosen by the firmware.
 *
 * Arguments (scripts/cm4-count passes them): start=ADDR,stop=ADDR or mark=ADDR; optional
 * phase=ADDR, out=FILE, log=FILE, skip=N.
 *
 * start/stop/mark/phase are the entry addresses of marker functions whose only instruction is
 * `bx lr` (sgmcmc/cortex_m/count.hpp defines sgmcmc_count_start/stop/mark/phase that way; the
 * Thumb bit is ignored). One interval is the number of instructions executed after the start
 * marker returns and before the instruction that calls the stop marker, so the firmware sequence
 *   bl sgmcmc_count_start; <K instructions>; bl sgmcmc_count_stop
 * gives exactly K. Everything the core executes in that window counts, exception handlers
 * included. With mark= alone, each call of the marker ends one interval and starts the next.
 * Each call of the phase marker starts a new group of intervals (phase 0 is before the first
 * call), summarised separately; a phase call inside an open interval discards it (unmatched).
 *
 * Every instruction gets an inline TCG add to one 64-bit counter (emitted before the instruction
 * runs, so an instruction that faults or is retried counts each time it is executed; QEMU does
 * not re-run the counters of a block it re-translates for an icount I/O access). The markers'
 * `bx lr` gets a C callback instead, which reads the counter.
 *
 * Output (out=FILE, else QEMU's log via qemu_plugin_outs), at exit, one line per phase that has
 * intervals, then a totals line:
 *   phase=P intervals=N min=A median=B max=C mean=D total=S
 *   executed=E unmatched=U skipped=K phases=Q [bad_marker=1]
 * median is the lower middle value of the sorted counts (an observed count); executed is every
 * instruction the guest ran; unmatched counts stops without a start, starts while one was open
 * and phase calls inside an interval. log=FILE writes every interval's count, one per line, in
 * order, with a line "# phase P" before the counts of each phase P >= 1. skip=N drops the first
 * N intervals of every phase (warm-up) from the statistics and the log. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum marker_kind { MARK_START, MARK_STOP, MARK_BOTH, MARK_PHASE, MARK_KINDS };

/* The intervals of one phase. */
struct phase {
  uint64_t* counts;
  size_t n, capacity;
};

static uint64_t g_count;            /* instructions executed so far (inline adds) */
static uint64_t g_addr[MARK_KINDS]; /* marker entry addresses by kind (0 = unused) */
static const int g_kind[MARK_KINDS] = {MARK_START, MARK_STOP, MARK_BOTH, MARK_PHASE};
static bool g_open;                  /* a start has been seen and no stop since */
static uint64_t g_open_at;           /* g_count when the open interval began */
static uint64_t g_unmatched;         /* stray stops, restarted starts, phases inside */
static uint64_t g_skip, g_skip_left; /* warm-up intervals to drop per phase, left in this one */
static uint64_t g_skipped;           /* intervals dropped */
static struct phase* g_phases;       /* g_phases[0 .. g_n_phases-1] */
static size_t g_n_phases, g_phase_capacity;
static char *g_out_path, *g_log_path;
static bool g_bad_marker; /* a marker's first instruction was not `bx lr` */
static bool g_out_of_memory;

/* Grows *p (elements of size `size`) to hold at least `need`; false when out of memory. */
static bool reserve(void** p, size_t* capacity, size_t need, size_t size) {
  if (need <= *capacity) return true;
  size_t cap = *capacity ? 2 * *capacity : 16;
  while (cap < need) cap *= 2;
  void* q = realloc(*p, cap * size);
  if (!q) {
    g_out_of_memory = true;
    return false;
  }
  *p = q;
  *capacity = cap;
  return true;
}

static void new_phase(void) {
  if (!reserve((void**)&g_phases, &g_phase_capacity, g_n_phases + 1, sizeof *g_phases)) return;
  g_phases[g_n_phases++] = (struct phase){NULL, 0, 0};
  g_skip_left = g_skip;
}

static void record(uint64_t n) {
  if (g_skip_left > 0) {
    --g_skip_left;
    ++g_skipped;
    return;
  }
  struct phase* ph = &g_phases[g_n_phases - 1];
  if (!reserve((void**)&ph->counts, &ph->capacity, ph->n + 1, sizeof *ph->counts)) return;
  ph->counts[ph->n++] = n;
}

/* Runs when a marker's `bx lr` is about to execute (before it is counted). */
static void on_marker(unsigned int vcpu, void* userdata) {
  (void)vcpu;
  const int kind = *(const int*)userdata;
  g_count += 1; /* the marker's own bx lr */
  if (kind == MARK_PHASE) {
    if (g_open) ++g_unmatched;
    g_open = false;
    new_phase();
    return;
  }
  /* The interval excludes the call into the stop marker (one bl/blx) and the marker itself. */
  if (kind == MARK_STOP || kind == MARK_BOTH) {
    if (g_open) {
      record(g_count - 2 - g_open_at);
    } else if (kind == MARK_STOP) {
      ++g_unmatched;
    }
    g_open = false;
  }
  if (kind == MARK_START || kind == MARK_BOTH) {
    if (g_open) ++g_unmatched;
    g_open = true;
    g_open_at = g_count;
  }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    const uint64_t pc = qemu_plugin_insn_vaddr(insn);
    int which = -1;
    for (int k = 0; k < MARK_KINDS; ++k) {
      if (g_addr[k] != 0 && pc == g_addr[k]) which = k;
    }
    if (which < 0) {
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &g_count, 1);
      continue;
    }
    const uint8_t* bytes = qemu_plugin_insn_data(insn);
    if (qemu_plugin_insn_size(insn) != 2 || bytes[0] != 0x70 || bytes[1] != 0x47) {
      g_bad_marker = true; /* not Thumb `bx lr` (0x4770): the exclusions above would be wrong */
    }
    qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
                                           (void*)&g_kind[which]);
  }
}

static int compare_u64(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

static void report_at_exit(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  if (g_log_path) {
    FILE* log = fopen(g_log_path, "w");
    if (log) {
      for (size_t p = 0; p < g_n_phases; ++p) {
        if (p > 0) fprintf(log, "# phase %zu\n", p);
        for (size_t i = 0; i < g_phases[p].n; ++i) {
          fprintf(log, "%" PRIu64 "\n", g_phases[p].counts[i]);
        }
      }
      fclose(log);
    } else {
      qemu_plugin_outs("insn_count: cannot write the log file\n");
    }
  }
  FILE* out = g_out_path ? fopen(g_out_path, "w") : NULL;
  if (g_out_path && !out) qemu_plugin_outs("insn_count: cannot write the output file\n");
  char line[512];
  for (size_t p = 0; p < g_n_phases; ++p) {
    struct phase* ph = &g_phases[p];
    if (ph->n == 0) continue;
    uint64_t total = 0;
    for (size_t i = 0; i < ph->n; ++i) total += ph->counts[i];
    qsort(ph->counts, ph->n, sizeof *ph->counts, compare_u64);
    snprintf(line, sizeof line,
             "phase=%zu intervals=%zu min=%" PRIu64 " median=%" PRIu64 " max=%" PRIu64
             " mean=%.3f total=%" PRIu64 "\n",
             p, ph->n, ph->counts[0], ph->counts[(ph->n - 1) / 2], ph->counts[ph->n - 1],
             (double)total / (double)ph->n, total);
    if (out) {
      fputs(line, out);
    } else {
      qemu_plugin_outs(line);
    }
  }
  snprintf(line, sizeof line,
           "executed=%" PRIu64 " unmatched=%" PRIu64 " skipped=%" PRIu64 " phases=%zu%s%s\n",
           g_count, g_unmatched, g_skipped, g_n_phases, g_bad_marker ? " bad_marker=1" : "",
           g_out_of_memory ? " out_of_memory=1" : "");
  if (out) {
    fputs(line, out);
    fclose(out);
  } else {
    qemu_plugin_outs(line);
  }
  for (size_t p = 0; p < g_n_phases; ++p) free(g_phases[p].counts);
  free(g_phases);
  free(g_out_path);
  free(g_log_path);
}

/* Parses "0x..." or decimal into *v; returns false on junk. */
static bool parse_u64(const char* s, uint64_t* v) {
  char* end = NULL;
  if (*s == '\0') return false;
  *v = strtoull(s, &end, 0);
  return *end == '\0';
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc,
                                           char** argv) {
  if (!info->system_emulation || info->system.smp_vcpus != 1) {
    fprintf(stderr, "insn_count: needs system emulation with one vCPU\n");
    return -1;
  }
  static const char* const kNames[MARK_KINDS] = {"start", "stop", "mark", "phase"};
  for (int i = 0; i < argc; ++i) {
    const char* eq = strchr(argv[i], '=');
    if (!eq) {
      fprintf(stderr, "insn_count: argument '%s' is not key=value\n", argv[i]);
      return -1;
    }
    const size_t klen = (size_t)(eq - argv[i]);
    const char* val = eq + 1;
    uint64_t v = 0;
    bool ok = false;
    for (int k = 0; k < MARK_KINDS; ++k) {
      if (klen == strlen(kNames[k]) && !strncmp(argv[i], kNames[k], klen) && parse_u64(val, &v) &&
          v) {
        g_addr[k] = v & ~(uint64_t)1;
        ok = true;
      }
    }
    if (klen == 4 && !strncmp(argv[i], "skip", 4) && parse_u64(val, &v)) {
      g_skip = v;
      ok = true;
    } else if (klen == 3 && !strncmp(argv[i], "out", 3) && *val) {
      g_out_path = strdup(val);
      ok = true;
    } else if (klen == 3 && !strncmp(argv[i], "log", 3) && *val) {
      g_log_path = strdup(val);
      ok = true;
    }
    if (!ok) {
      fprintf(stderr, "insn_count: bad argument '%s'\n", argv[i]);
      return -1;
    }
  }
  const bool pair = g_addr[MARK_START] && g_addr[MARK_STOP];
  const bool single = g_addr[MARK_BOTH] != 0;
  bool distinct = true;
  for (int a = 0; a < MARK_KINDS; ++a) {
    for (int b = a + 1; b < MARK_KINDS; ++b) {
      if (g_addr[a] && g_addr[a] == g_addr[b]) distinct = false;
    }
  }
  if (pair == single || (!pair && (g_addr[MARK_START] || g_addr[MARK_STOP])) || !distinct) {
    fprintf(stderr, "insn_count: give start= and stop=, or mark= alone (distinct addresses)\n");
    return -1;
  }
  new_phase();
  if (g_out_of_memory) return -1;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, report_at_exit, NULL);
  return 0;
}
