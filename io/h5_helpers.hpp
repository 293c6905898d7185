// Small HDF5 helpers shared by the io/ sources (internal to io/).
#pragma once
#include <hdf5.h>

#include <string>

namespace onlinews::io {

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

inline void string_attr(hid_t obj, const char* name, const std::string& value) {
  hid_t t = vlen_string();
  hid_t sp = H5Screate(H5S_SCALAR);
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  const char* p = value.c_str();
  H5Awrite(a, t, &p);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

template <class T>
inline void number_attr(hid_t obj, const char* name, hid_t type, T value) {
  hid_t sp = H5Screate(H5S_SCALAR);
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, type, &value);
  H5Aclose(a);
  H5Sclose(sp);
}

}  // namespace onlinews::io
