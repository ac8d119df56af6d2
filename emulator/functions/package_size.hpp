#pragma once
// The size of a function's deployment package as Lambda would receive it: the code directory
// and each layer directory, zipped. The cold-start model charges Init Duration per zipped MB,
// because that is the unit of the published measurements, so the unzipped size on disk is
// not enough.

#include <cstdint>
#include <filesystem>
#include <system_error>
#include <vector>

namespace coldbrew::functions {

struct package_measure {
    std::uint64_t files = 0;        // regular files
    std::uint64_t bytes = 0;        // sum of regular file sizes (unzipped)
    std::uint64_t zipped_bytes = 0;  // estimated .zip size, headers included
    bool estimated = false;         // true when only a sample was compressed
};

// Walks each directory (each is one .zip: the code, then every layer) and estimates the
// archive size as zip tools build it:
// - every file is compressed on its own with raw deflate at zlib level 6 (zip's default), and
//   stored instead when that does not make it smaller, as zip does;
// - each file adds its local header (30 bytes + name) and central directory entry (46 bytes +
//   name), names relative to the directory with '/'; each directory adds one end record (22
//   bytes). Directory entries are not counted (SAM and the Serverless Framework write files
//   only).
// Symlinks are not followed and not counted; unreadable files and directories are skipped.
//
// At most `sample_limit_bytes` of file content are compressed, so start-up stays fast on
// huge packages. Beyond that, files are sampled evenly across the walk (whole files, or a
// prefix of a large one) and the zipped size of the rest is extrapolated from the ratio the
// sample achieved (`estimated` = true). A limit of 0 compresses nothing and counts content
// as stored.
//
// Errors: a directory that does not exist (no_such_file_or_directory), is not a directory
// (not_a_directory) or cannot be opened → `ec` set and an empty measure returned.
package_measure measure_package(const std::vector<std::filesystem::path>& dirs, std::error_code& ec,
                                std::uint64_t sample_limit_bytes = 16ull << 20);

}  // namespace coldbrew::functions
