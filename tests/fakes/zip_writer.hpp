#pragma once
// Writes a .zip for tests with libarchive: regular files and symbolic links, names as given
// (including names a safe extractor must refuse).

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace coldbrew::test {

struct zip_item {
    std::string name;
    std::string content;      // file content
    std::string symlink = {};  // non-empty: a symbolic link to this target
};

inline void write_zip(const std::filesystem::path& file, const std::vector<zip_item>& items) {
    archive* a = archive_write_new();
    archive_write_set_format_zip(a);
    if (archive_write_open_filename(a, file.c_str()) != ARCHIVE_OK) {
        archive_write_free(a);
        throw std::runtime_error("cannot write " + file.string());
    }
    for (const auto& item : items) {
        archive_entry* e = archive_entry_new();
        archive_entry_set_pathname(e, item.name.c_str());
        if (!item.symlink.empty()) {
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_set_symlink(e, item.symlink.c_str());
            archive_entry_set_perm(e, 0777);
            archive_write_header(a, e);
        } else {
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_perm(e, 0644);
            archive_entry_set_size(e, static_cast<la_int64_t>(item.content.size()));
            archive_write_header(a, e);
            archive_write_data(a, item.content.data(), item.content.size());
        }
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
}

}  // namespace coldbrew::test
