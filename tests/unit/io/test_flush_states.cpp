// The result file's promise to a killed job (docs/output.md, "A killed
// job's file"), checked at every point it is made, deterministically: after
// publish() and after every appended epoch the bytes on disk, copied aside
// as a SIGKILL would leave them, form a file HDF5 opens, with as many epochs
// as it says and each metric's row of the last one in place; the file is
// never shorter than the end its superblock records (io/h5_flush.cpp trims
// the flush's slack, never below that end).  mpi.kill_trials kills real
// jobs at random moments, inside flushes too; this covers the flush
// boundaries one by one.  The module is loaded as the runtime loads it.
#include <hdf5.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "io/module.hpp"
#include "io/module_open.hpp"

namespace {

namespace fs = std::filesystem;
using onlinews::io::H5Output;
using onlinews::io::ModuleApi;

const ModuleApi& module_api() {
  static std::string why;
  static const ModuleApi* api = [] {
    void* handle = nullptr;
    return static_cast<const ModuleApi*>(
        onlinews::io::open_module(ONLINEWS_IO_MODULE, onlinews::io::kModuleBuildId, handle, why));
  }();
  INFO(why);
  REQUIRE(api != nullptr);
  return *api;
}

// The end of file the superblock on disk records (version 2/3: byte 28).
std::uint64_t stored_end(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[36] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  REQUIRE(in.gcount() == static_cast<std::streamsize>(sizeof head));
  REQUIRE(std::memcmp(head + 1, "HDF", 3) == 0);
  REQUIRE((head[8] == 2 || head[8] == 3));  // (H5F_LIBVER_V18 and later)
  std::uint64_t end = 0;
  for (int i = 7; i >= 0; --i) end = (end << 8) | head[28 + i];
  return end;
}

std::int64_t dims0(hid_t f, const std::string& name, hsize_t* cols = nullptr) {
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t s = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(s, dims, nullptr);
  if (cols != nullptr) *cols = dims[1];
  H5Sclose(s);
  H5Dclose(d);
  return static_cast<std::int64_t>(dims[0]);
}

double value(int epoch, std::size_t metric, int location) { return epoch * 1000.0 + metric + location * 1e-3; }

// What a SIGKILL now would leave: the file's bytes, opened as a reader would.
void check_as_killed(const std::string& path, const std::string& copy, int epochs, std::size_t metrics,
                     int locations) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK(static_cast<std::uint64_t>(st.st_size) >= stored_end(path));
  fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
  const hid_t f = H5Fopen(copy.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  std::int64_t said = -1;
  const hid_t a = H5Aopen(f, "epochs", H5P_DEFAULT);
  REQUIRE(a >= 0);
  H5Aread(a, H5T_NATIVE_INT64, &said);
  H5Aclose(a);
  CHECK(said == epochs);
  CHECK(dims0(f, "epochs/table") == epochs);
  for (std::size_t m : {std::size_t{0}, metrics / 2, metrics - 1}) {
    const std::string name = "epochs/m" + std::to_string(m);
    hsize_t cols = 0;
    const std::int64_t rows = dims0(f, name, &cols);
    CHECK(rows >= epochs);  // (at most one more: an epoch's metric rows go before its table row)
    if (epochs == 0 || rows < epochs) continue;
    std::vector<double> row(cols);
    const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    const hid_t fs_ = H5Dget_space(d);
    hsize_t start[2] = {static_cast<hsize_t>(epochs - 1), 0}, count[2] = {1, cols};
    H5Sselect_hyperslab(fs_, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t ms = H5Screate_simple(2, count, nullptr);
    REQUIRE(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs_, H5P_DEFAULT, row.data()) >= 0);
    H5Sclose(ms);
    H5Sclose(fs_);
    H5Dclose(d);
    REQUIRE(cols >= static_cast<hsize_t>(locations));
    for (int l = 0; l < locations; ++l) CHECK(row[static_cast<std::size_t>(l)] == value(epochs - 1, m, l));
  }
  H5Fclose(f);
}

// As many metric datasets as the real file has (~175): the flush's slack
// is sized by the chunks written since the last flush.
std::vector<onlinews::io::MetricDef> many_metrics() {
  std::vector<onlinews::io::MetricDef> metrics;
  for (int m = 0; m < 175; ++m) metrics.push_back({"m" + std::to_string(m), "M", "sec", "test metric", -1});
  return metrics;
}

struct TempDir {
  fs::path dir;
  TempDir() {
    char tmpl[] = "/tmp/onlinews_flush_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
  }
  ~TempDir() { fs::remove_all(dir); }
};

}  // namespace

TEST_CASE("every flush leaves a file that opens, with the epochs it says", "[io][kill]") {
  const ModuleApi& api = module_api();
  TempDir tmp;
  const std::string path = (tmp.dir / "run.h5").string(), copy = (tmp.dir / "as_killed.h5").string();
  const std::vector<onlinews::io::MetricDef> metrics = many_metrics();
  std::unique_ptr<H5Output> out(api.new_output());
  std::string error;
  REQUIRE(out->create(path, metrics, 4, error));
  CHECK_FALSE(fs::exists(path));  // (a hidden name until published)
  REQUIRE(out->write_definitions({{"main", "function", "a.c", 1}}, {{-1, 0, -1}}, {{0, 0}}, metrics, {}));
  out->set_attr("epochs", std::int64_t{0});  // (as the runtime does before publishing)
  REQUIRE(out->publish(error));
  REQUIRE(fs::exists(path));
  check_as_killed(path, copy, 0, metrics.size(), 0);
  // 4 locations, then 70 from epoch 40 on: more columns than the chunk
  // cache was opened for (h5output.cpp reopens the metric datasets).
  for (int e = 0; e < 80; ++e) {
    const int locations = e < 40 ? 4 : 70;
    std::vector<double> values(static_cast<std::size_t>(locations) * metrics.size());
    for (int l = 0; l < locations; ++l) {
      for (std::size_t m = 0; m < metrics.size(); ++m) values[static_cast<std::size_t>(l) * metrics.size() + m] = value(e, m, l);
    }
    onlinews::io::EpochRow row;
    row.index = e;
    row.t_begin = e;
    row.t_end = e + 1;
    row.cut = 1;
    REQUIRE(out->append_epoch(row, values, locations));
    check_as_killed(path, copy, e + 1, metrics.size(), locations);
  }
  out->close();
  check_as_killed(path, copy, 80, metrics.size(), 70);
}

TEST_CASE("publishing never replaces a file that appeared meanwhile", "[io]") {
  const ModuleApi& api = module_api();
  TempDir tmp;
  const std::string path = (tmp.dir / "run.h5").string();
  std::vector<onlinews::io::MetricDef> metrics{{"m0", "M", "sec", "test metric", -1}};
  std::unique_ptr<H5Output> out(api.new_output());
  std::string error;
  REQUIRE(out->create(path, metrics, 2, error));
  { std::ofstream(path) << "someone else's\n"; }
  CHECK_FALSE(out->publish(error));
  CHECK(error.find("File exists") != std::string::npos);
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  CHECK(first == "someone else's");
  out->close();
}

// A full disk (here: the file size limit, RLIMIT_FSIZE, with SIGXFSZ
// ignored, so that writes past it fail with EFBIG): the append that fails
// marks the file failed, later appends write nothing, and the close must
// succeed.  HDF5 1.10's H5Fclose failing in its flush frees the file but
// keeps its identifier, which HDF5's shutdown at exit closes again: this
// test binary then died of SIGSEGV after its last test.
TEST_CASE("a file whose writes fail is closed, and keeps the epochs before", "[io]") {
  const ModuleApi& api = module_api();
  TempDir tmp;
  const std::string path = (tmp.dir / "run.h5").string(), copy = (tmp.dir / "after.h5").string();
  const std::vector<onlinews::io::MetricDef> metrics = many_metrics();
  std::unique_ptr<H5Output> out(api.new_output());
  std::string error;
  REQUIRE(out->create(path, metrics, 4, error));
  REQUIRE(out->publish(error));
  auto append = [&](int e) {
    std::vector<double> values(4 * metrics.size());
    for (int l = 0; l < 4; ++l) {
      for (std::size_t m = 0; m < metrics.size(); ++m) values[static_cast<std::size_t>(l) * metrics.size() + m] = value(e, m, l);
    }
    onlinews::io::EpochRow row;
    row.index = e;
    row.t_end = e + 1;
    return out->append_epoch(row, values, 4);
  };
  for (int e = 0; e < 10; ++e) REQUIRE(append(e));
  CHECK_FALSE(out->failed());
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  struct rlimit before {};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &before) == 0);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit full = before;
  full.rlim_cur = static_cast<rlim_t>(st.st_size);  // (no byte more)
  REQUIRE(setrlimit(RLIMIT_FSIZE, &full) == 0);
  int failed_at = -1;
  for (int e = 10; e < 200 && failed_at < 0; ++e) {
    if (!append(e)) failed_at = e;
  }
  const bool failed = out->failed();
  // (The limit would hold for the in-memory file the close writes to as
  // well; a disk quota does not.)
  setrlimit(RLIMIT_FSIZE, &before);
  signal(SIGXFSZ, old_handler);
  out->close();
  INFO("the first append that failed: " << failed_at);
  REQUIRE(failed_at >= 10);
  CHECK(failed);
  CHECK(out->failed());
  // The file on disk: what the last successful flush left, at least the 10
  // epochs before the limit.
  fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
  const hid_t f = H5Fopen(copy.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(dims0(f, "epochs/table") >= 10);
  H5Fclose(f);
}
