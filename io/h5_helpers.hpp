// Small HDF5 helpers shared by the io/ sources (internal to io/).
#pragma once
#include <hdf5.h>

#include <string>

namespace onlinews::io {

// H5Fflush that a SIGKILL during it cannot leave shorter than the end its
// superblock records; `chunk_bytes`: the chunk sizes of the datasets
// written since the last flush, which may take their space during it
// (h5_flush.cpp).
bool flush_kill_safe(hid_t file, hsize_t chunk_bytes);

// H5Fclose after flush_kill_safe: HDF5's close otherwise releases space,
// truncates the file, and only then rewrites the superblock's end of file,
// so a kill between the two leaves a file no reader opens (h5_flush.cpp).
// A file whose flush fails is closed with its writes diverted (below).
bool close_kill_safe(hid_t file, hsize_t chunk_bytes = 0);

// Sends what HDF5 still writes to a sec2 `file` to an in-memory file, so
// that its close succeeds: for a file whose writes fail (h5_flush.cpp).
void divert_writes(hid_t file);

// Links and attributes kept in the object header, never in a fractal heap:
// a group's creation properties, or the file's (its root group's).  In a
// serial file, HDF5 gives a fractal heap's new blocks their space only
// when it flushes them, and space taken during a flush is what a later
// close releases, with a truncate before the superblock's rewrite
// (h5_flush.cpp).
void compact_storage(hid_t gcpl);
hid_t create_group(hid_t parent, const char* name);

// Creates the file for `path` under a new temporary name next to it
// (returned in `tmp`), for H5File::publish to rename (h5_flush.cpp).
hid_t create_unnamed(const std::string& path, hid_t fcpl, hid_t fapl, std::string& tmp);

// Silences HDF5's own error stack printing for the duration of a scope: we
// report failures ourselves, once.
struct QuietH5 {
  H5E_auto2_t fn = nullptr;
  void* data = nullptr;
  QuietH5() {
    H5Eget_auto2(H5E_DEFAULT, &fn, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietH5() { H5Eset_auto2(H5E_DEFAULT, fn, data); }
};

inline hid_t vlen_string() {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

// Attribute `name` of `obj`, scalar, to be written with `type`: the
// existing one where its type is the same, written in place.  Deleting and
// creating it again left a window in which a SIGKILL could leave the file
// without it, once the metadata cache had written the delete
// (mpi.kill_trials under ASan: a file of 76 epochs killed in MPI_Finalize
// had no `complete`).  A different type is deleted and created anew.
inline hid_t scalar_attr_to_write(hid_t obj, const char* name, hid_t type) {
  if (H5Aexists(obj, name) > 0) {
    const hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a >= 0) {
      const hid_t t = H5Aget_type(a);
      const bool same = t >= 0 && H5Tequal(t, type) > 0;
      if (t >= 0) H5Tclose(t);
      if (same) return a;
      H5Aclose(a);
    }
    H5Adelete(obj, name);
  }
  const hid_t sp = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Sclose(sp);
  return a;
}

inline void string_attr(hid_t obj, const char* name, const std::string& value) {
  const hid_t t = vlen_string();
  const hid_t a = scalar_attr_to_write(obj, name, t);
  const char* p = value.c_str();
  if (a >= 0) {
    H5Awrite(a, t, &p);
    H5Aclose(a);
  }
  H5Tclose(t);
}

template <class T>
inline void number_attr(hid_t obj, const char* name, hid_t type, T value) {
  const hid_t a = scalar_attr_to_write(obj, name, type);
  if (a >= 0) {
    H5Awrite(a, type, &value);
    H5Aclose(a);
  }
}

// Writes (or, with `read`, reads) `data` as the hyperslab [start, start +
// count) of dataset `d` (rank `n`); after growing it to `grow` if given.
inline bool slab(hid_t d, int n, const hsize_t* start, const hsize_t* count, hid_t type, void* data,
                 const hsize_t* grow = nullptr, bool read = false) {
  if (grow != nullptr && H5Dset_extent(d, grow) < 0) return false;
  hid_t fs = H5Dget_space(d);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(n, count, nullptr);
  const herr_t rc = read ? H5Dread(d, type, ms, fs, H5P_DEFAULT, data) : H5Dwrite(d, type, ms, fs, H5P_DEFAULT, data);
  H5Sclose(ms);
  H5Sclose(fs);
  return rc >= 0;
}

// The group `name` of `parent`, created if it does not exist yet.
inline hid_t open_group(hid_t parent, const char* name) {
  return H5Lexists(parent, name, H5P_DEFAULT) > 0 ? H5Gopen2(parent, name, H5P_DEFAULT)
                                                  : create_group(parent, name);
}

}  // namespace onlinews::io
