/* Helpers for the MPI scenario programs: exact sleeps (waits are then exact
 * even with more ranks than cores), a sleep inside a user region, ranks. */
#ifndef ONLINEWS_SCENARIO_H
#define ONLINEWS_SCENARIO_H
#include <errno.h>
#include <stdio.h>
#include <mpi.h>
#include <onlinews.h>
#include <time.h>

static inline void sleep_s(double s) {
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* CLOCK_MONOTONIC in seconds: one clock for every process of a node
 * (MPI_Wtime may count from a per-process origin: newer Open MPI releases
 * set one at MPI_Init). */
static inline double node_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sleeps `s` seconds inside user region `name`. */
static inline void region_sleep(const char* name, double s) {
  onlinews_region_begin(name);
  sleep_s(s);
  onlinews_region_end(name);
}

static inline int world_rank(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static inline int world_size(void) {
  int s;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
#endif
