// The live log (live_log.hpp): JSON lines, each one write(2).
#include "live_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace onlinews::io {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

}  // namespace

LiveLog::~LiveLog() { close(); }

std::string LiveLog::path_for(const std::string& h5_path) {
  const auto dot = h5_path.rfind(".h5");
  return (dot != std::string::npos && dot + 3 == h5_path.size() ? h5_path.substr(0, dot) : h5_path) + ".live";
}

bool LiveLog::open(const std::string& h5_path, const std::string& command, int ranks,
                   const std::vector<MetricDef>& metrics, const std::vector<std::string>& wait_states,
                   std::string& error) {
  close();
  const std::string path = path_for(h5_path);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error = "cannot write the live log '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::string names;
  for (const auto& m : metrics) names += (names.empty() ? "" : ",") + quoted(m.name) + ":" + quoted(m.display);
  std::string waits;
  for (const auto& w : wait_states) waits += (waits.empty() ? "" : ",") + quoted(w);
  write_line("{\"format\":\"onlinews-live\",\"version\":1,\"file\":" + quoted(h5_path) +
             ",\"command\":" + quoted(command) + ",\"ranks\":" + std::to_string(ranks) + ",\"display\":{" + names +
             "},\"wait_states\":[" + waits + "]}");
  return true;
}

void LiveLog::epoch(const EpochRow& row, const std::vector<std::pair<std::string, double>>& totals) {
  if (fd_ < 0) return;
  std::string line = "{\"epoch\":" + std::to_string(row.index) + ",\"t_begin\":" + number(row.t_begin) +
                     ",\"t_end\":" + number(row.t_end) + ",\"cut\":" + std::to_string(row.cut) +
                     ",\"events\":" + std::to_string(row.events) +
                     ",\"dropped_events\":" + std::to_string(row.dropped_events) +
                     ",\"analysis_seconds\":" + number(row.analysis_seconds) + ",\"totals\":{";
  for (std::size_t i = 0; i < totals.size(); ++i) {
    line += (i > 0 ? "," : "") + quoted(totals[i].first) + ":" + number(totals[i].second);
  }
  write_line(line + "}}");
}

void LiveLog::complete(std::int64_t epochs, double wall_seconds) {
  if (fd_ < 0) return;
  write_line("{\"complete\":true,\"epochs\":" + std::to_string(epochs) + ",\"wall_seconds\":" + number(wall_seconds) +
             "}");
}

void LiveLog::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void LiveLog::write_line(const std::string& text) {
  // One write: the line and its '\n' (a short write is finished; a failing
  // log is given up, the result file is what counts).
  const std::string line = text + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close();
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace onlinews::io
