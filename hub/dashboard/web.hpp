#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "common/http/message.hpp"

namespace hub::dashboard {

/// One file of hub/web/, embedded in the binary at build time (cmake/embed_web_files.cmake).
struct WebFile {
    std::string_view name;  ///< "app.js"
    std::string_view content;
};

/// Every embedded file (generated).
const std::vector<WebFile>& web_files();

/// The Content-Type of a file name by its extension (a static text).
std::string_view content_type_of(std::string_view name);

/// The answer for `path` under /dashboard (`/` is index.html), with a strict Content-Security-Policy; nullopt
/// when there is no such file.
std::optional<common::http::Response> web_response(std::string_view path);

}  // namespace hub::dashboard
