/* Message probing (seed 004's test cases, scaled to fractions of a second).
 * The first argument picks the case; see the probe_*.expect files.
 *
 *   matching   (2 ranks) rank 0 sleeps 0.2 s, then sends tag 1 and tag 2 to
 *              rank 1, which matched-probes tag 1 (MPI_Mprobe: waits 0.2 s),
 *              probes tag 2 (MPI_Probe, message there: no wait), receives tag
 *              2 (MPI_Recv), then tag 1 (MPI_Mrecv).  Rank 1 sleeps 0.3 s and
 *              sends to rank 0, which probes twice (the first waits 0.3 s, the
 *              second is a repeat) and receives.  No receive waits.
 *   chain      (3 ranks, seed 004 Listing 2) rank 0 sleeps 0.4 s in "sleep" and
 *              sends to 1; rank 1 probes (waits 0.4 s) and receives, sleeps
 *              0.2 s in "sleep", sends to 2; rank 2 probes (waits 0.6 s) and
 *              receives.  Costs: rank 1's wait is rank 0's sleep (0.4 short);
 *              rank 2's is rank 1's sleep (0.2 short) and rank 0's (0.4 long).
 *   wrongorder (4 ranks) rank r > 0 sleeps 0.2 r s in "sleep" and sends to 0;
 *              rank 0 probes and receives from 2, 3, then 1: its probes wait
 *              0.4 and 0.2 s although rank 1's message (sent at 0.2 s) was
 *              there: 0.6 s of Wrong Order (different sources).
 *   lslr       (2 ranks, seed 004 §4.2.6) rank 0: "fill_array" 0.05 s, "sleep1"
 *              0.3 s, then MPI_Ssend; rank 1 probes at once (waits 0.35 s:
 *              Late Sender), "sleep2" 0.4 s, then receives: the Ssend waits
 *              0.4 s (Late Receiver); rank 1 then "finish"es 0.1 s.  One send,
 *              two synchronization points: Late Sender costs on fill_array
 *              and sleep1, Late Receiver costs on sleep2; the critical path
 *              runs sleep1 -> (probe) -> sleep2 -> finish.
 *   polling    (2 ranks) rank 0 sleeps 0.3 s, sends tag 1; rank 1 polls
 *              MPI_Improbe, then MPI_Imrecv + MPI_Wait: 0.3 s of Late Sender in
 *              the polling MPI_Improbe visit.  Then rank 0 sleeps 0.2 s, sends
 *              tag 2; rank 1 polls MPI_Iprobe, then MPI_Recv: 0.2 s in
 *              MPI_Iprobe.
 *   unreceived (2 ranks) rank 1 sleeps 0.2 s, then sends a message that
 *              rank 0 probes but never receives: the probe waited 0.2 s for
 *              it (analyzed against the message it saw), no hang.
 */
#include <string.h>

#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "matching";
  double buf[4] = {0}, big[1 << 14];
  MPI_Status st;
  MPI_Message msg;
  MPI_Request req;
  int flag = 0;
  memset(big, 0, sizeof big);
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "matching") == 0) {
    if (rank == 0) {
      sleep_s(0.2);
      MPI_Send(buf, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
      MPI_Send(buf, 2, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
      MPI_Probe(1, 3, MPI_COMM_WORLD, &st);
      MPI_Probe(1, 3, MPI_COMM_WORLD, &st);
      MPI_Recv(buf, 4, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Mprobe(0, 1, MPI_COMM_WORLD, &msg, &st);
      MPI_Probe(0, 2, MPI_COMM_WORLD, &st);
      MPI_Recv(buf, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Mrecv(buf, 4, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
      sleep_s(0.3);
      MPI_Send(buf, 3, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "chain") == 0) {
    if (rank > 0) {
      MPI_Probe(rank - 1, 0, MPI_COMM_WORLD, &st);
      MPI_Recv(buf, 4, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank < size - 1) {
      region_sleep("sleep", rank == 0 ? 0.4 : 0.2);
      MPI_Send(buf, 4, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "wrongorder") == 0) {
    if (rank == 0) {
      const int order[3] = {2, 3, 1};
      for (int k = 0; k < 3 && order[k] < size; ++k) {
        MPI_Probe(order[k], 0, MPI_COMM_WORLD, &st);
        MPI_Recv(buf, 4, MPI_DOUBLE, order[k], 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else {
      region_sleep("sleep", 0.2 * rank);
      MPI_Send(buf, 4, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "lslr") == 0) {
    if (rank == 0) {
      region_sleep("fill_array", 0.05);
      region_sleep("sleep1", 0.3);
      MPI_Ssend(big, 1 << 14, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Probe(0, 0, MPI_COMM_WORLD, &st);
      region_sleep("sleep2", 0.4);
      MPI_Recv(big, 1 << 14, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      region_sleep("finish", 0.1);
    }
  } else if (strcmp(mode, "polling") == 0) {
    if (rank == 0) {
      sleep_s(0.3);
      MPI_Send(buf, 4, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
      sleep_s(0.2);
      MPI_Send(buf, 4, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    } else if (rank == 1) {
      while (!flag) MPI_Improbe(0, 1, MPI_COMM_WORLD, &flag, &msg, &st);
      MPI_Imrecv(buf, 4, MPI_DOUBLE, &msg, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      flag = 0;
      while (!flag) MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, &st);
      MPI_Recv(buf, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (strcmp(mode, "unreceived") == 0) {
    if (rank == 1) {
      sleep_s(0.2);
      MPI_Send(buf, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
    }
    if (rank == 0) MPI_Probe(1, 9, MPI_COMM_WORLD, &st);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
