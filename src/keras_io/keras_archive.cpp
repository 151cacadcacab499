// The zip container of `.keras` files (config.json, metadata.json, model.weights.h5; Keras 3
// stores them uncompressed) read through libzip (docs/formats.md 13.3).
#include <tapeflow/keras/detail/hdf5_weights.hpp>

#include <filesystem>
#include <string>

#include <tapeflow/core/errors.hpp>

#if TAPEFLOW_HAS_LIBZIP
#include <zip.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::keras_hdf5 {

std::string read_archive_member(const std::string& archive, const std::string& member) {
#if TAPEFLOW_HAS_LIBZIP
  if (!std::filesystem::exists(archive)) {
    throw not_found("tf::keras load_weights: '" + archive + "' does not exist");
  }
  int err = 0;
  zip_t* zip = zip_open(archive.c_str(), ZIP_RDONLY, &err);
  if (zip == nullptr) {
    throw data_loss("tf::keras load_weights: '" + archive + "' is not a zip archive (libzip error " +
                    std::to_string(err) + ")");
  }
  struct Closer {
    zip_t* z;
    ~Closer() { zip_discard(z); }
  } closer{zip};
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(zip, member.c_str(), 0, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0) {
    throw not_found("tf::keras load_weights: '" + archive + "' has no member '" + member + "'");
  }
  // The archive's own size bounds the member's (Keras stores members uncompressed; a
  // compressed one may expand, but never beyond what zip's 32-bit sizes allow here).
  const auto limit = std::filesystem::file_size(archive) * 1024 + (1 << 20);
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
#else
  (void)member;
  throw unimplemented("tf::keras load_weights: reading '" + archive +
                      "' (a .keras zip archive) needs libzip: install Debian's libzip-dev and "
                      "reconfigure tapeflow");
#endif
}

}  // namespace detail::keras_hdf5
TAPEFLOW_END_NAMESPACE
