// The zip container of `.keras` files (config.json, metadata.json, model.weights.h5; Keras 3
// stores them uncompressed) read through libzip (docs/formats.md 13.3).
#include <tapeflow/keras/detail/hdf5_weights.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>

#if TAPEFLOW_HAS_LIBZIP
#include <zip.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::keras_hdf5 {
namespace {

#if TAPEFLOW_HAS_LIBZIP
// Reads `member` of an open archive whose own size is `archive_bytes`; closes the archive.
std::string read_member(zip_t* zip, const std::string& archive, const std::string& member,
                        std::uint64_t archive_bytes) {
  struct Closer {
    zip_t* z;
    ~Closer() { zip_discard(z); }
  } closer{zip};
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(zip, member.c_str(), 0, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0) {
    throw not_found("tf::keras load_weights: '" + archive + "' has no member '" + member + "'");
  }
  // The archive's own size bounds the member's (Keras stores members uncompressed; deflate
  // expands at most ~1032:1), so a forged header never sizes the allocation.
  const std::uint64_t limit = archive_bytes * 1032 + (1 << 20);
  if (st.size > limit) {
    throw data_loss("tf::keras load_weights: '" + archive + "': member '" + member +
                    "' claims " + std::to_string(st.size) + " bytes");
  }
  zip_file_t* f = zip_fopen(zip, member.c_str(), 0);
  if (f == nullptr) {
    throw data_loss("tf::keras load_weights: '" + archive + "': cannot open member '" + member +
                    "'");
  }
  std::string out(static_cast<std::size_t>(st.size), '\0');
  const zip_int64_t n = zip_fread(f, out.data(), st.size);
  zip_fclose(f);
  if (n < 0 || static_cast<zip_uint64_t>(n) != st.size) {
    throw data_loss("tf::keras load_weights: '" + archive + "': member '" + member +
                    "' is truncated or corrupt");
  }
  return out;
}

[[noreturn]] void not_zip(const std::string& archive, int err) {
  throw data_loss("tf::keras load_weights: '" + archive + "' is not a zip archive (libzip error " +
                  std::to_string(err) + ")");
}
#else
[[noreturn]] void no_libzip(const std::string& archive) {
  throw unimplemented("tf::keras load_weights: reading '" + archive +
                      "' (a .keras zip archive) needs libzip: install Debian's libzip-dev and "
                      "reconfigure tapeflow");
}
#endif

}  // namespace

std::string read_archive_member(const std::string& archive, const std::string& member) {
#if TAPEFLOW_HAS_LIBZIP
  if (!std::filesystem::exists(archive)) {
    throw not_found("tf::keras load_weights: '" + archive + "' does not exist");
  }
  int err = 0;
  zip_t* zip = zip_open(archive.c_str(), ZIP_RDONLY, &err);
  if (zip == nullptr) {
    not_zip(archive, err);
  }
  return read_member(zip, archive, member, std::filesystem::file_size(archive));
#else
  (void)member;
  no_libzip(archive);
#endif
}

std::string read_archive_member(std::string_view bytes, const std::string& name,
                                const std::string& member) {
#if TAPEFLOW_HAS_LIBZIP
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    zip_error_fini(&error);
    throw resource_exhausted("tf::keras load_weights: '" + name + "': cannot wrap the archive");
  }
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY, &error);
  if (zip == nullptr) {
    const int err = zip_error_code_zip(&error);
    zip_error_fini(&error);
    zip_source_free(source);  // still ours when the open failed
    not_zip(name, err);
  }
  zip_error_fini(&error);
  return read_member(zip, name, member, bytes.size());
#else
  (void)bytes;
  (void)member;
  no_libzip(name);
#endif
}

}  // namespace detail::keras_hdf5
TAPEFLOW_END_NAMESPACE
