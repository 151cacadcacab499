// Keras 3 weights files through libhdf5's C API (docs/formats.md 13.2): groups `<path>/vars`
// with a UTF-8 `name` attribute and one contiguous dataset per variable, named by its index.
// HDF5's own error printing is switched off; every failure becomes a typed tapeflow error naming
// the file and the object.
#include <tapeflow/keras/detail/hdf5_weights.hpp>

#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::keras_hdf5 {
namespace {

// Closes an HDF5 handle with the function its kind needs.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) {
      close_(id_);
    }
  }
  [[nodiscard]] hid_t get() const noexcept { return id_; }
  [[nodiscard]] bool ok() const noexcept { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

hid_t file_type(DType t, const std::string& where) {
  switch (t) {
    case DType::float32: return H5T_IEEE_F32LE;
    case DType::float64: return H5T_IEEE_F64LE;
    case DType::int32: return H5T_STD_I32LE;
    case DType::int64: return H5T_STD_I64LE;
    case DType::uint8: return H5T_STD_U8LE;
    default:
      throw unimplemented("tf::keras save_weights: '" + where + "' has dtype " +
                          std::string(dtype_name(t)) +
                          ": Keras weights files hold numbers (float32/64, int32/64, uint8)");
  }
}

hid_t memory_type(DType t, const std::string& where) {
  switch (t) {
    case DType::float32: return H5T_NATIVE_FLOAT;
    case DType::float64: return H5T_NATIVE_DOUBLE;
    case DType::int32: return H5T_NATIVE_INT32;
    case DType::int64: return H5T_NATIVE_INT64;
    case DType::uint8: return H5T_NATIVE_UINT8;
    default:
      throw unimplemented("tf::keras load_weights: '" + where + "': variables of dtype " +
                          std::string(dtype_name(t)) + " cannot be read from a weights file");
  }
}

// The dtype a stored dataset maps to, or invalid for types Keras never writes.
DType stored_dtype(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT) {
    return size == 4 ? DType::float32 : size == 8 ? DType::float64 : DType::invalid;
  }
  if (cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    if (size == 8 && is_signed) {
      return DType::int64;
    }
    if (size == 4 && is_signed) {
      return DType::int32;
    }
    if (size == 1 && !is_signed) {
      return DType::uint8;
    }
  }
  return DType::invalid;
}

std::string vars_path(const std::string& path) { return path.empty() ? "vars" : path + "/vars"; }

void write_name(hid_t group, const std::string& value, const std::string& where) {
  const Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const Handle attr(H5Acreate2(group, "name", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                    H5Aclose);
  const char* text = value.c_str();
  if (!attr.ok() || H5Awrite(attr.get(), type.get(), static_cast<const void*>(&text)) < 0) {
    throw internal("tf::keras save_weights: cannot write the name of '" + where + "'");
  }
}

}  // namespace

void write_weights(const std::string& filename, const std::vector<WeightsGroup>& groups) {
  quiet();
  const std::string tmp = filename + ".tmp-tapeflow";
  {
    // Object modification times off: the same weights give the same bytes.
    const Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
    const Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT), H5Fclose);
    if (!file.ok()) {
      throw not_found("tf::keras save_weights: cannot create '" + filename +
                      "' (does its directory exist and is it writable?)");
    }
    const Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    const Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
    H5Pset_obj_track_times(gcpl.get(), 0);
    const Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_obj_track_times(dcpl.get(), 0);
    for (const auto& g : groups) {
      const std::string path = vars_path(g.path);
      const Handle group(H5Gcreate2(file.get(), path.c_str(), lcpl.get(), gcpl.get(), H5P_DEFAULT),
                         H5Gclose);
      if (!group.ok()) {
        std::filesystem::remove(tmp);
        throw invalid_argument("tf::keras save_weights: '" + filename + "': cannot create group '" +
                               path + "' (two objects with the same path?)");
      }
      write_name(group.get(), g.name, path);
      for (std::size_t i = 0; i < g.values.size(); ++i) {
        const AnyTensor& v = g.values[i];
        const std::string where = path + "/" + std::to_string(i);
        std::vector<hsize_t> dims(v.shape().dims().begin(), v.shape().dims().end());
        const Handle space(dims.empty() ? H5Screate(H5S_SCALAR)
                                        : H5Screate_simple(static_cast<int>(dims.size()),
                                                           dims.data(), nullptr),
                           H5Sclose);
        const Handle set(H5Dcreate2(group.get(), std::to_string(i).c_str(),
                                    file_type(v.dtype(), where), space.get(), H5P_DEFAULT,
                                    dcpl.get(), H5P_DEFAULT),
                         H5Dclose);
        if (!set.ok() || H5Dwrite(set.get(), memory_type(v.dtype(), where), H5S_ALL, H5S_ALL,
                                  H5P_DEFAULT, v.raw_data()) < 0) {
          std::filesystem::remove(tmp);
          throw internal("tf::keras save_weights: '" + filename + "': cannot write '" + where +
                         "'");
        }
      }
    }
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) {
      std::filesystem::remove(tmp);
      throw internal("tf::keras save_weights: cannot flush '" + filename + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, filename, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw not_found("tf::keras save_weights: cannot move the written file to '" + filename +
                    "': " + ec.message());
  }
}

WeightsFile::WeightsFile(const std::string& filename) : name_(filename) {
  quiet();
  if (!std::filesystem::exists(filename)) {
    throw not_found("tf::keras load_weights: '" + filename + "' does not exist");
  }
  if (H5Fis_hdf5(filename.c_str()) <= 0) {
    throw data_loss("tf::keras load_weights: '" + filename + "' is not an HDF5 file");
  }
  file_ = H5Fopen(filename.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) {
    throw data_loss("tf::keras load_weights: cannot open '" + filename + "' (corrupt HDF5 file)");
  }
}

WeightsFile::WeightsFile(std::string image, std::string name)
    : name_(std::move(name)), image_(std::move(image)) {
  quiet();
  const Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // The core driver reads the image in place (no backing file).
  H5Pset_fapl_core(fapl.get(), 1 << 20, 0);
  if (H5Pset_file_image(fapl.get(), image_.data(), image_.size()) < 0) {
    throw data_loss("tf::keras load_weights: '" + name_ + "': cannot use the file image");
  }
  file_ = H5Fopen("tapeflow-image.h5", H5F_ACC_RDONLY, fapl.get());
  if (file_ < 0) {
    throw data_loss("tf::keras load_weights: '" + name_ + "' is not a readable HDF5 file");
  }
}

WeightsFile::~WeightsFile() {
  if (file_ >= 0) {
    H5Fclose(file_);
  }
}

std::optional<std::vector<StoredVariable>> WeightsFile::variables(const std::string& path) const {
  quiet();
  const std::string p = vars_path(path);
  // H5Lexists needs every intermediate link to exist: check each prefix in turn.
  for (std::size_t end = 0; end != std::string::npos;) {
    end = p.find('/', end + 1);
    if (H5Lexists(file_, p.substr(0, end).c_str(), H5P_DEFAULT) <= 0) {
      return std::nullopt;
    }
  }
  const Handle group(H5Gopen2(file_, p.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.ok()) {
    throw data_loss("tf::keras load_weights: '" + name_ + "': '" + p + "' is not a group");
  }
  std::vector<StoredVariable> out;
  for (std::size_t i = 0;; ++i) {
    const std::string key = std::to_string(i);
    if (H5Lexists(group.get(), key.c_str(), H5P_DEFAULT) <= 0) {
      break;
    }
    const Handle set(H5Dopen2(group.get(), key.c_str(), H5P_DEFAULT), H5Dclose);
    const Handle type(set.ok() ? H5Dget_type(set.get()) : -1, H5Tclose);
    const Handle space(set.ok() ? H5Dget_space(set.get()) : -1, H5Sclose);
    if (!type.ok() || !space.ok()) {
      throw data_loss("tf::keras load_weights: '" + name_ + "': '" + p + "/" + key +
                      "' is not a dataset");
    }
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 8) {
      throw data_loss("tf::keras load_weights: '" + name_ + "': '" + p + "/" + key +
                      "' has an unsupported dataspace (rank " + std::to_string(rank) + ")");
    }
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    StoredVariable v;
    v.shape = Shape(std::vector<std::int64_t>(dims.begin(), dims.end()));
    v.dtype = stored_dtype(type.get());
    if (v.dtype == DType::invalid) {
      throw data_loss("tf::keras load_weights: '" + name_ + "': '" + p + "/" + key +
                      "' holds a type Keras does not write");
    }
    out.push_back(std::move(v));
  }
  return out;
}

void WeightsFile::read(const std::string& path, std::size_t index, DType dtype,
                       std::int64_t count, void* out) const {
  quiet();
  const std::string where = vars_path(path) + "/" + std::to_string(index);
  const Handle set(H5Dopen2(file_, where.c_str(), H5P_DEFAULT), H5Dclose);
  const Handle space(set.ok() ? H5Dget_space(set.get()) : -1, H5Sclose);
  if (!space.ok() || H5Sget_simple_extent_npoints(space.get()) != count) {
    throw data_loss("tf::keras load_weights: '" + name_ + "': cannot read '" + where + "'");
  }
  check_storage(set.get(), count, where);
  if (H5Dread(set.get(), memory_type(dtype, where), H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
    throw data_loss("tf::keras load_weights: '" + name_ + "': cannot read '" + where + "'");
  }
}

void WeightsFile::check_storage(std::int64_t set, std::int64_t count,
                                const std::string& where) const {
  // Keras writes contiguous datasets inside the file. A forged layout must not make libhdf5 read
  // other files (external or virtual storage) or past the end of this one, which its 1.10
  // releases do not check on every path (fuzz/README.md).
  const Handle dcpl(H5Dget_create_plist(set), H5Pclose);
  const Handle type(H5Dget_type(set), H5Tclose);
  const H5D_layout_t layout = dcpl.ok() ? H5Pget_layout(dcpl.get()) : H5D_LAYOUT_ERROR;
  if (!type.ok() || (layout != H5D_CONTIGUOUS && layout != H5D_COMPACT && layout != H5D_CHUNKED) ||
      H5Pget_external_count(dcpl.get()) != 0) {
    throw data_loss("tf::keras load_weights: '" + name_ + "': '" + where +
                    "' has a storage layout Keras does not write");
  }
  const auto bytes = static_cast<hsize_t>(count) * H5Tget_size(type.get());
  if (layout == H5D_COMPACT && H5Dget_storage_size(set) < bytes) {
    throw data_loss("tf::keras load_weights: '" + name_ + "': '" + where + "' stores " +
                    std::to_string(H5Dget_storage_size(set)) + " of its " +
                    std::to_string(bytes) + " bytes");
  }
  if (layout != H5D_CONTIGUOUS) {
    return;
  }
  const haddr_t offset = H5Dget_offset(set);
  hsize_t file_bytes = 0;
  if (offset != HADDR_UNDEF &&  // never written: libhdf5 gives the fill value
      (H5Fget_filesize(file_, &file_bytes) < 0 || offset > file_bytes ||
       file_bytes - offset < bytes)) {
    throw data_loss("tf::keras load_weights: '" + name_ + "': '" + where + "' (" +
                    std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                    ") lies past the end of the file (" + std::to_string(file_bytes) +
                    " bytes)");
  }
}

}  // namespace detail::keras_hdf5
TAPEFLOW_END_NAMESPACE
