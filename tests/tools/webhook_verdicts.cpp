// Prints the hub's verdict on webhook bodies, one line per file:
//   <file name>\t<valid|invalid>\t<comma-separated JSON pointers of the problems>
// Arguments are files, or directories whose *.json files are taken in name order. Used by
// tests/schema/diff.py to compare the hub with the JSON Schemas. Exit status: 0 when every file was read, 2
// otherwise.

#include "common/json/parse.hpp"
#include "hub/ingest/validate.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

bool read_file(const fs::path& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    out = std::move(buffer).str();
    return !in.bad();
}

std::string verdict_line(const fs::path& path, const std::string& body) {
    std::string line = path.filename().string();
    const common::json::ParseResult parsed = common::json::parse_strict(body);
    if (!parsed.value) {
        return line + "\tinvalid\t";  // the whole body: path ""
    }
    const hub::ingest::ValidationResult result = hub::ingest::validate_webhook(*parsed.value);
    if (result.value) {
        return line + "\tvalid\t";
    }
    line += "\tinvalid\t";
    for (std::size_t i = 0; i < result.errors.size(); ++i) {
        line += (i == 0 ? "" : ",") + result.errors[i].path;
    }
    return line;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: webhook_verdicts FILE_OR_DIR...\n";
        return 2;
    }
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg(argv[i]);
        std::error_code ec;
        if (!fs::is_directory(arg, ec)) {
            files.push_back(arg);
            continue;
        }
        std::vector<fs::path> found;
        for (const auto& entry : fs::directory_iterator(arg, ec)) {
            if (entry.is_regular_file() && entry.path().extension() == ".json") {
                found.push_back(entry.path());
            }
        }
        if (ec) {
            std::cerr << "cannot list " << arg << ": " << ec.message() << "\n";
            return 2;
        }
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
    }

    int status = 0;
    std::string body;
    for (const fs::path& file : files) {
        if (!read_file(file, body)) {
            std::cerr << "cannot read " << file << "\n";
            status = 2;
            continue;
        }
        std::cout << verdict_line(file, body) << "\n";
    }
    return status;
}
