// The live log: one JSON line per finished epoch, next to the result file
// (<name>.live for <name>.h5), for `onlinews-report --follow` while the job
// runs.  Rank 0 only.
//
// Why not the HDF5 file itself: a reader may not open an HDF5 file another
// process is writing, except under SWMR, which forbids what the writer does
// after its start (new datasets: the profile and definitions at
// MPI_Finalize).  The live log is append-only text: every line is written by
// one write(2) on an O_APPEND descriptor and ends with '\n', the last byte
// written; bytes once written never change.  A reader that parses only
// complete lines (up to a '\n') therefore never sees a partial or changed
// record, whatever it reads while the writer writes (docs/report.md).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "h5output.hpp"

namespace onlinews::io {

class LiveLog {
 public:
  LiveLog() = default;
  ~LiveLog();
  LiveLog(const LiveLog&) = delete;
  LiveLog& operator=(const LiveLog&) = delete;

  // The log's path for a result file's path.
  static std::string path_for(const std::string& h5_path);
  // Creates (or truncates: it belongs to the new result file) the log and
  // writes its first line, with the display name of every metric.  False
  // with `error` set if it cannot.
  bool open(const std::string& h5_path, const std::string& command, int ranks, const std::vector<MetricDef>& metrics,
            const std::vector<std::string>& wait_states, std::string& error);
  // One finished epoch: its row and totals over all locations (name, value).
  void epoch(const EpochRow& row, const std::vector<std::pair<std::string, double>>& totals);
  // The last line: MPI_Finalize wrote the result file.
  void complete(std::int64_t epochs, double wall_seconds);
  void close();

 private:
  void write_line(const std::string& line);
  int fd_ = -1;
};

}  // namespace onlinews::io
