// The ParaView sidecar <name>.xdmf (h5output.hpp, write_xdmf): plain XML
// next to the result file, part of libonlinews (no HDF5 call).
#include <algorithm>
#include <fstream>

#include "h5output.hpp"

namespace onlinews::io {

bool write_xdmf(const std::string& h5_path, const std::vector<std::string>& views, const Grid& grid,
                const std::vector<double>& epoch_ends, std::string& error) {
  std::string xdmf = h5_path;
  const auto dot = xdmf.rfind(".h5");
  xdmf = (dot != std::string::npos && dot + 3 == xdmf.size() ? xdmf.substr(0, dot) : xdmf) + ".xdmf";
  const std::string base = h5_path.substr(h5_path.find_last_of('/') + 1);
  const std::int64_t cz = grid.dims[0], cy = grid.dims[1], cx = grid.dims[2];
  const std::int64_t nc = cz * cy * cx, nv = static_cast<std::int64_t>(views.size());
  const std::int64_t ne = static_cast<std::int64_t>(epoch_ends.size());
  std::ofstream x(xdmf);
  if (!x) {
    error = "cannot write '" + xdmf + "'";
    return false;
  }
  x.precision(12);  // (epoch end times: short epochs of a long run stay apart)
  // A view's slab of a dataset [.., n_views, n_cells] as a (z, y, x) block.
  auto slab = [&](const std::string& name, const char* dataset, std::int64_t lead, std::int64_t e, std::int64_t v) {
    x << "    <Attribute Name=\"" << name << "\" Center=\"Cell\" AttributeType=\"Scalar\">\n"
      << "     <DataItem ItemType=\"HyperSlab\" Dimensions=\"" << cz << " " << cy << " " << cx
      << "\" Type=\"HyperSlab\">\n";
    if (lead > 0) {
      x << "      <DataItem Dimensions=\"3 3\" Format=\"XML\">" << e << " " << v << " 0 1 1 1 1 1 " << nc
        << "</DataItem>\n      <DataItem Dimensions=\"" << lead << " " << nv << " " << nc;
    } else {
      x << "      <DataItem Dimensions=\"3 2\" Format=\"XML\">" << v << " 0 1 1 1 " << nc
        << "</DataItem>\n      <DataItem Dimensions=\"" << nv << " " << nc;
    }
    x << "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" << base << ":/views/" << dataset
      << "</DataItem>\n     </DataItem>\n    </Attribute>\n";
  };
  x << "<?xml version=\"1.0\" ?>\n"
    << "<!-- onlinews: per-rank metric values on the process grid (" << grid.source << ", " << cz << " x " << cy
    << " x " << cx << " cells);\n     one time step per epoch, at its end (seconds since MPI_Init): each view's "
    << "epoch value (<view>)\n     and run total (total_<view>). Data: " << base << " /views/grid, /views/grid_totals. "
    << "-->\n<Xdmf Version=\"2.0\">\n <Domain>\n"
    << "  <Grid Name=\"onlinews\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (std::int64_t e = 0; e < std::max<std::int64_t>(ne, 1); ++e) {
    x << "   <Grid Name=\"epoch " << e << "\" GridType=\"Uniform\">\n"
      << "    <Time Value=\"" << (ne > 0 ? epoch_ends[static_cast<std::size_t>(e)] : 0.0) << "\"/>\n"
      << "    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << cz + 1 << " " << cy + 1 << " " << cx + 1
      << "\"/>\n"
      << "    <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      << "     <DataItem Dimensions=\"3\" Format=\"XML\">0 0 0</DataItem>\n"
      << "     <DataItem Dimensions=\"3\" Format=\"XML\">1 1 1</DataItem>\n"
      << "    </Geometry>\n";
    for (std::int64_t v = 0; v < nv; ++v) {
      const std::string& name = views[static_cast<std::size_t>(v)];
      if (ne > 0) slab(name, "grid", ne, e, v);
      slab("total_" + name, "grid_totals", 0, 0, v);
    }
    x << "   </Grid>\n";
  }
  x << "  </Grid>\n </Domain>\n</Xdmf>\n";
  x.close();
  if (!x) {
    error = "cannot write '" + xdmf + "'";
    return false;
  }
  return true;
}

}  // namespace onlinews::io
