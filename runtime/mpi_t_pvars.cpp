// MPI_T performance variables (mpi_t_pvars.hpp).  Which names mean the
// message queues, per library:
//   Open MPI (ob1):  pml_ob1_unexpected_msgq_length, pml_ob1_posted_recvq_length
//                    (class SIZE, bound to a communicator, one value per peer)
//   MPICH:           unexpected_recvq_length, posted_recvq_length
#include "mpi_t_pvars.hpp"

#include <algorithm>
#include <cstring>

namespace onlinews::rt {
namespace {

const char* const kQueues[] = {"pml_ob1_unexpected_msgq_length", "pml_ob1_posted_recvq_length",
                               "unexpected_recvq_length", "posted_recvq_length"};

// The first index of a variable by name, with its binding, type and class.
struct Found {
  int index = -1, bind = MPI_T_BIND_NO_OBJECT, var_class = 0, continuous = 1;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};
Found find(const std::string& wanted, int n) {
  for (int i = 0; i < n; ++i) {
    char name[256], desc[8];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, var_class = 0, bind = 0, readonly = 0,
        continuous = 0, atomic = 0;
    MPI_Datatype type;
    MPI_T_enum en;
    if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &en, desc, &desc_len, &bind,
                            &readonly, &continuous, &atomic) != MPI_SUCCESS) {
      continue;
    }
    if (wanted == name) return {i, bind, var_class, continuous, type};
  }
  return {};
}

bool numeric(MPI_Datatype t) {
  return t == MPI_INT || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG ||
         t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_COUNT || t == MPI_DOUBLE;
}

double value_at(const std::vector<unsigned char>& buf, MPI_Datatype t, int k) {
  auto get = [&](auto v) {
    std::memcpy(&v, buf.data() + static_cast<std::size_t>(k) * sizeof v, sizeof v);
    return static_cast<double>(v);
  };
  if (t == MPI_INT) return get(int{});
  if (t == MPI_UNSIGNED) return get(unsigned{});
  if (t == MPI_UNSIGNED_LONG) return get(0UL);
  if (t == MPI_UNSIGNED_LONG_LONG) return get(0ULL);
  if (t == MPI_LONG) return get(0L);
  if (t == MPI_LONG_LONG) return get(0LL);
  if (t == MPI_COUNT) return get(MPI_Count{});
  return get(0.0);
}

}  // namespace

void PvarSampler::start(const std::vector<std::string>& wanted, int thread_level, int rank,
                        std::vector<std::string>& warnings) {
  MPI_Comm world = MPI_COMM_WORLD;
  std::vector<std::string> names;
  for (const auto& w : wanted) {
    if (w == "queues") {
      names.insert(names.end(), std::begin(kQueues), std::end(kQueues));
    } else if (!w.empty()) {
      names.push_back(w);
    }
  }
  if (names.empty()) return;
  int n = 0;
  started_ = mpi_t_open(thread_level) && MPI_T_pvar_session_create(&session_) == MPI_SUCCESS;
  if (started_) MPI_T_pvar_get_num(&n);
  // Found here, and (agreed below) on every rank.
  std::vector<int> mine(names.size(), 0), all(names.size(), 0);
  std::vector<Var> vars(names.size());
  for (std::size_t i = 0; i < names.size() && started_; ++i) {
    const Found f = find(names[i], n);
    if (f.index < 0 || !numeric(f.type)) continue;
    if (f.bind != MPI_T_BIND_NO_OBJECT && f.bind != MPI_T_BIND_MPI_COMM) continue;
    MPI_Comm comm = world;  // (the application's world: the library's own queues)
    void* object = f.bind == MPI_T_BIND_MPI_COMM ? static_cast<void*>(&comm) : nullptr;
    if (MPI_T_pvar_handle_alloc(session_, f.index, object, &vars[i].handle, &vars[i].count) != MPI_SUCCESS) continue;
    if (!f.continuous && MPI_T_pvar_start(session_, vars[i].handle) != MPI_SUCCESS) {
      MPI_T_pvar_handle_free(session_, &vars[i].handle);
      continue;
    }
    vars[i].type = f.type;
    mine[i] = 1;
  }
  PMPI_Allreduce(mine.data(), all.data(), static_cast<int>(names.size()), MPI_INT, MPI_MIN, world);
  bool any_queue = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool queue = std::find(std::begin(kQueues), std::end(kQueues), names[i]) != std::end(kQueues);
    if (all[i] != 0) {
      vars_.push_back(vars[i]);
      names_.push_back(names[i]);
      any_queue = any_queue || queue;
    } else {
      if (mine[i] != 0) MPI_T_pvar_handle_free(session_, &vars[i].handle);
      if (!queue && rank == 0) {
        warnings.push_back("ONLINEWS_MPI_T_PVARS: this MPI library does not export the performance variable '" +
                           names[i] + "' on every rank (readable per process or per communicator): not sampled");
      }
    }
  }
  const bool asked_queues = std::find(wanted.begin(), wanted.end(), "queues") != wanted.end();
  if (asked_queues && !any_queue && rank == 0) {
    warnings.push_back("ONLINEWS_MPI_T_PVARS=queues: this MPI library exports no message queue lengths through "
                       "MPI_T (known: Open MPI's ob1, MPICH's ch3): not sampled");
  }
  if (vars_.empty()) stop();
}

std::vector<double> PvarSampler::sample() const {
  std::vector<double> out;
  std::vector<unsigned char> buf;
  for (const Var& v : vars_) {
    buf.assign(static_cast<std::size_t>(std::max(v.count, 1)) * 16, 0);
    double sum = 0;
    if (MPI_T_pvar_read(session_, v.handle, buf.data()) == MPI_SUCCESS) {
      for (int k = 0; k < v.count; ++k) sum += value_at(buf, v.type, k);
    }
    out.push_back(sum);
  }
  return out;
}

void PvarSampler::stop() {
  if (!started_) return;
  for (Var& v : vars_) MPI_T_pvar_handle_free(session_, &v.handle);
  vars_.clear();
  MPI_T_pvar_session_free(&session_);
  started_ = false;
}

namespace {
enum class MpiT { Closed, Open, Failed, Finalized };
MpiT g_mpi_t = MpiT::Closed;
}  // namespace

bool mpi_t_open(int thread_level) {
  if (g_mpi_t == MpiT::Closed) {
    int provided = 0;
    g_mpi_t = MPI_T_init_thread(thread_level, &provided) == MPI_SUCCESS ? MpiT::Open : MpiT::Failed;
  }
  return g_mpi_t == MpiT::Open;
}

void mpi_t_close() {
  if (g_mpi_t == MpiT::Open) MPI_T_finalize();
  g_mpi_t = MpiT::Finalized;
}

}  // namespace onlinews::rt
